import type { Context, TypedResponse } from 'hono';
import type { StatusCode } from 'hono/utils/http-status';
import type { Operation, Scope, z } from '../../shared/contracts/common.js';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import type { Metrics } from '../fleet/metrics.js';
import type { Readiness } from '../fleet/readiness.js';
import type { Logger } from '../log.js';
import type { Mailer } from '../mail.js';
import type { AttachmentStorage } from '../storage.js';
import type { Claimed } from '../worker/claim.js';
import type { Outbound } from '../worker/types.js';

export type Role = 'owner' | 'admin' | 'member';
export type KeyScope = Exclude<Scope, 'public' | 'session'>;

/** Who is calling: an API key or a dashboard session, always inside one organization. */
export interface Actor {
  kind: 'key' | 'session';
  orgId: string;
  scopes: KeyScope[];
  role: Role | null;
  keyId?: string;
  keyPrefix?: string;
  userId?: string;
  sessionId?: string;
}

/** Everything a handler may use, built once at start-up and injected. */
export interface Deps {
  config: Config;
  database: Database;
  mailer: Mailer;
  /** Private attachment files (local folder by default). */
  storage: AttachmentStorage;
  log: Logger;
  /** Wakes the delivery worker after a commit that planned deliveries. */
  wake: () => void;
  now: () => Date;
  fetch: typeof fetch;
  /** Outbound HTTP behind the SSRF guard: webhooks, Telegram, destination tests. */
  outbound: Outbound;
  /** Prometheus series (METRICS=true); absent or a no-op otherwise. */
  metrics?: Metrics;
  /** /readyz's state (a shutdown under way); absent in tests that build deps by hand. */
  readiness?: Readiness;
  /** This process's delivery worker taking deliveries as intake writes them (absent: no worker here). */
  handoff?: Handoff;
}

/**
 * Intake's shortcut past the claim: a delivery that this process's worker has room for is written
 * already claimed (`sending`, attempt 1, a lease) in intake's own statement and queued here after
 * it commits. Nothing changes for failure: should the process die first, the lease runs out and
 * any worker takes the row again, as with any claim.
 */
export interface Handoff {
  leaseMs: number;
  /** Rows for this target the worker would queue now (0: write it pending, a claim takes it). */
  room(targetId: string): number;
  /** Rows already committed as claimed by this process. */
  take(rows: Claimed[]): void;
  /** Intake requests beginning and answered here: while they queue, the worker's sends yield (IntakeLoad). */
  started(): void;
  finished(): void;
}

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
