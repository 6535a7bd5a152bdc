import type { Context, TypedResponse } from 'hono';
import type { StatusCode } from 'hono/utils/http-status';
import type { Operation, z } from '../../shared/contracts/common.js';
import type { Actor, Deps } from '../core/deps.js';

export type { Actor, Deps, Handoff, KeyScope, Role } from '../core/deps.js';

export type AppEnv = {
  Variables: {
    deps: Deps;
    actor: Actor;
    requestId: string;
    clientIp: string;
    /** The try at an email code this request took (verify-code, sign-in: server/http/code-tries.ts). */
    codeTry: { id: string };
  };
};

export type Ctx = Context<AppEnv>;

type JsonSchemaOf<C> = C extends { content: { 'application/json': { schema: infer S extends z.ZodType } } } ? S : never;

/** The JSON body an operation answers with `status`, as its contract declares it (what its schema accepts). */
export type ResponseOf<R extends Operation, S extends number = 200> = S extends keyof R['responses']
  ? z.input<JsonSchemaOf<R['responses'][S]>>
  : never;

/** A reply `send` made: the body's type and the status travel with it, so the handler's return type checks them. */
export type Sent<T, S extends StatusCode> = TypedResponse<T, S, 'json'>;
export type NoContent = TypedResponse<null, 204, 'body'>;

/**
 * What a handler of operation R may return: for each status the contract declares with a JSON body,
 * that body's type; 204 when it declares one. A route answering another shape than its contract's
 * (a forgotten field, another operation's body) does not compile. HTML, files and redirects are
 * answered with `as never`, outside this check (they have no JSON schema); errors are thrown.
 */
export type Reply<R extends Operation> =
  | { [S in keyof R['responses'] & StatusCode]: Sent<ResponseOf<R, S>, S> }[keyof R['responses'] & StatusCode]
  | (204 extends keyof R['responses'] ? NoContent : never);

/** A JSON reply (200 unless a status is given); the handler's return type (Reply) checks it against the contract. */
export function send<T>(c: Context, body: T): Sent<T, 200>;
export function send<T, S extends StatusCode>(c: Context, body: T, status: S): Sent<T, S>;
export function send(c: Context, body: unknown, status: StatusCode = 200) {
  return c.json(body as object, status as 200);
}

export function noContent(c: Context): NoContent {
  return c.body(null, 204) as unknown as NoContent;
}
