import type { RouteConfig } from '@hono/zod-openapi';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { NO_CREDENTIALS, SESSION_ONLY, type Security } from './security.js';

export { z };

/**
 * @hono/zod-openapi's createRoute, restated: the config plus a non-enumerable getRoutingPath. Importing
 * it would load hono and the OpenAPI generator with every contract, in every CLI command, for this.
 */
function createRoute<R extends RouteConfig>(route: R): R & { getRoutingPath(): string } {
  const withPath = { ...route, getRoutingPath: () => route.path.replaceAll(/\/{(.+?)}/g, '/:$1') };
  return Object.defineProperty(withPath, 'getRoutingPath', { enumerable: false });
}

/** Who may call an operation. `session` = dashboard session cookie with owner or admin role. */
export type Scope = 'public' | 'submit' | 'read' | 'manage' | 'session';

export const Timestamp = z
  .string()
  .meta({ description: 'ISO 8601 UTC timestamp', example: '2026-01-01T00:00:00.000Z' });

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      hint: z.string().optional(),
      docs: z.string().optional(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: 'Error' });

/** Response headers of 429 and 503 error answers. */
const RETRY_AFTER = {
  'Retry-After': {
    description:
      'Seconds to wait before trying again: sent with every 429, and with a 503 that knows when to come back',
    schema: { type: 'integer', minimum: 0 },
  },
} as const;

/** Error responses for a route: the codes it can return, grouped by status. */
export function errors(...codes: ErrorCode[]) {
  const out: Record<
    number,
    {
      description: string;
      headers?: typeof RETRY_AFTER;
      content: { 'application/json': { schema: typeof ErrorEnvelope } };
    }
  > = {};
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    const prev = out[status]?.description;
    out[status] = {
      description: prev ? `${prev}, ${code}` : code,
      ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      content: { 'application/json': { schema: ErrorEnvelope } },
    };
  }
  return out;
}

export const json = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

export const body = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

export const ListQuery = z.object({
  cursor: z.string().optional().meta({ description: 'next_cursor of the previous page' }),
  limit: z.coerce.number().int().min(1).max(200).optional().meta({ description: 'page size, default 50, at most 200' }),
});

export const listOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() }).meta({ id });

export const IdParam = z.object({ id: z.string().meta({ param: { name: 'id', in: 'path' } }) });

export const NextStep = z.object({
  why: z.string(),
  method: z.string(),
  path: z.string(),
  body: z.record(z.string(), z.unknown()).optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

export const IfExists = z.enum(['return', 'error']).optional().meta({
  description: '"return" answers the existing resource instead of 409 conflict',
});

/**
 * One entry of the operation registry: a createRoute config plus who may call it. `x-scope` is what
 * server/http/auth.ts authorize() enforces; `security` names the credentials that satisfy it.
 */
export type Operation = RouteConfig & {
  operationId: string;
  'x-scope': Scope;
  /**
   * An operation whose effect is on the caller's own credentials (sign-out, switching the session's
   * organization): it runs every time, no Idempotency-Key answer is kept or given back for it.
   */
  'x-never-replayed'?: boolean;
  security: Security;
  getRoutingPath(): string;
};

/** The credentials each scope accepts, unless an operation names its own (sandboxes, session-only verbs). */
function securityFor(scope: Scope): Security {
  if (scope === 'public') return NO_CREDENTIALS;
  if (scope === 'session') return SESSION_ONLY;
  return [{ ApiKey: [] }, { OAuth2: [scope] }, { Session: [] }];
}

/** Which keys a scope admits: scopes nest, manage ⊃ read ⊃ submit (server/http/auth.ts hasScope). */
const KEY_TEXT: Partial<Record<Scope, string>> = {
  submit: 'an API key of any scope',
  read: 'an API key with the read or manage scope',
  manage: 'an API key with the manage scope',
};

const CREDENTIAL_TEXT: Record<string, (scope: Scope) => string> = {
  ApiKey: (scope) => KEY_TEXT[scope] ?? 'an API key',
  OAuth2: (scope) => `an OAuth access token with the ${scope} scope or a wider one`,
  Session: (scope) =>
    scope === 'session'
      ? 'the dashboard session cookie of an owner or admin (an API key answers 403)'
      : 'a dashboard session cookie',
  Sandbox: () => 'the sandbox token (`Authorization: Sandbox <sandbox_token>`)',
  SandboxClaim: () => 'the sandbox token in `Service-Sandbox-Token`',
};

/** "Credentials: …" in words, from the security requirements: alternatives joined by "or". */
function credentialsText(scope: Scope, security: Security): string {
  if (security.length === 0) return 'Credentials: none.';
  const ways = security.map((req) => {
    const parts = Object.keys(req).map((name) => CREDENTIAL_TEXT[name](scope));
    return parts.length ? parts.join(' and ') : 'none';
  });
  return `Credentials: ${ways.join(', or ')}.`;
}

/** The Idempotency-Key header as the server honours it (server/http/idempotency.ts). */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the first request with a key runs and its answer is kept; the same key with the same ' +
    'body gets that answer again (Idempotent-Replayed: true), with another body 409 idempotency_conflict. Kept ' +
    '24 hours per organization, sealed under a hash of the key and the body; a repeat after that runs again.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
} as const;

/** The same header on the credential-less POSTs under /v1, kept in a public scope for 24 h. */
const IDEMPOTENCY_KEY_PUBLIC = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Kept 24 hours: a repeat with the same key and the same body gets the first answer again (its Set-Cookie too, ' +
    'with the header `Idempotent-Replayed: true`); another body under the key runs as a request of its own. The ' +
    'answer may hold a one-time secret, so it is stored sealed under a hash of this header and the body, and the ' +
    'header itself only hashed: use a random value. A request carrying an email code counts against the ' +
    "address's budget of tries whether or not it is a repeat.",
  schema: { type: 'string', minLength: 1, maxLength: 255 },
} as const;

type Parameters = NonNullable<RouteConfig['parameters']>;

/** Whether an operation declares the header `name` (lowercase) among its own request headers. */
export function declaresHeader(route: Omit<RouteConfig, 'path'>, name: string): boolean {
  const headers = route.request?.headers as { shape?: Record<string, unknown> } | undefined;
  return Boolean(headers?.shape && name in headers.shape);
}

/**
 * Defines one operation. operationId is `<resource>_<verb>`. Adds what the document says of every
 * operation alike: x-scope, the credentials it accepts (security, and in words in the description),
 * and the Idempotency-Key header of POSTs under /v1. `security` is given only where it differs from
 * what the scope accepts (sandbox tokens, verbs that need a session whatever the scope).
 */
export function op<P extends string, R extends Omit<RouteConfig, 'path'> & { path: P; operationId: string }>(
  scope: Scope,
  route: R,
) {
  const security = (route.security as Security | undefined) ?? securityFor(scope);
  const needsKeyHeader =
    route.method === 'post' &&
    route.path.startsWith('/v1/') &&
    !declaresHeader(route, 'idempotency-key') &&
    !(route as { 'x-never-replayed'?: boolean })['x-never-replayed'];
  const keyHeader = scope === 'public' ? IDEMPOTENCY_KEY_PUBLIC : { $ref: '#/components/parameters/IdempotencyKey' };
  const parameters = [...(route.parameters ?? []), ...(needsKeyHeader ? [keyHeader] : [])] as Parameters;
  return createRoute({
    ...route,
    description: [route.description, credentialsText(scope, security)].filter(Boolean).join('\n\n'),
    'x-scope': scope,
    security,
    ...(parameters.length ? { parameters } : {}),
  });
}

/**
 * What an operation says of itself where the rest is the same for every resource; `also`: the error
 * codes it adds. The helpers below write their keys in the order of a hand-written op (method, path,
 * operationId, tags, summary, request, responses), so /openapi.json is the same either way.
 */
interface OpSpec<P extends string> {
  path: P;
  operationId: string;
  tags: string[];
  summary: string;
  also?: ErrorCode[];
}

/**
 * GET of one resource by its id (read scope): 200 with the resource, 404 for an unknown id or one of
 * another organization.
 */
export function getById<P extends string, T extends z.ZodType>(schema: T, { also = [], ...route }: OpSpec<P>) {
  return op('read', {
    method: 'get',
    ...route,
    request: { params: IdParam },
    responses: { 200: json(schema), ...errors('unauthorized', ...also, 'not_found') },
  });
}

/** DELETE of one resource by its id (manage scope): 204, or 404 as for a GET. */
export function deleteById<P extends string>({ also = [], ...route }: OpSpec<P>) {
  return op('manage', {
    method: 'delete',
    ...route,
    request: { params: IdParam },
    responses: { 204: { description: 'Deleted' }, ...errors('unauthorized', 'forbidden', 'not_found', ...also) },
  });
}

type Query = NonNullable<NonNullable<RouteConfig['request']>['query']>;

/** A GET of one page of a collection: the query (cursor, limit, filters) and the page schema (listOf). */
export function listPage<P extends string, Q extends Query, L extends z.ZodType>(
  scope: Scope,
  page: L,
  { also = [], query, ...route }: OpSpec<P> & { query: Q },
) {
  return op(scope, {
    method: 'get',
    ...route,
    request: { query },
    responses: { 200: json(page), ...errors('unauthorized', ...also, 'validation_failed') },
  });
}

/** The answers of a create that takes if_exists: 201 with the new resource, 200 with the one that was there. */
export const createdOrExisting = <T extends z.ZodType>(schema: T, existing: string) => ({
  201: json(schema, 'Created'),
  200: json(schema, existing),
});
