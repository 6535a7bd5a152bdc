import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { declaresHeader, type Operation } from '../../shared/contracts/common.js';
import { authorize } from './auth.js';
import type { AppEnv, Reply } from './context.js';
import { idempotency, publicIdempotency } from './idempotency.js';
import { storableJson, storableParams } from './storable.js';

/**
 * Mounts one registry operation: scope check, Idempotency-Key on authenticated POSTs, unstorable
 * strings refused (path and query parameters; /v1 JSON bodies, as intake has its own rules),
 * validation, handler. The handler's answer is typed by the operation's contract (Reply).
 */
export function mount<R extends Operation & RouteConfig>(
  app: OpenAPIHono<AppEnv>,
  op: R,
  handler: (c: Parameters<RouteHandler<R, AppEnv>>[0]) => Reply<R> | Promise<Reply<R>>,
  extra: MiddlewareHandler<AppEnv>[] = [],
): void {
  // A public operation (intake, the thanks page) has no credentials to check: no middleware for it.
  const middleware: MiddlewareHandler<AppEnv>[] = [
    ...(op['x-scope'] === 'public' ? [] : [authorize(op['x-scope'])]),
    storableParams(!!op.request?.query),
    ...extra,
  ];
  const keeper = keeperOf(op);
  if (keeper) middleware.push(keeper);
  if (op.path.startsWith('/v1/') && op.request?.body) middleware.push(storableJson);
  if (!plainParams(op.request?.params)) {
    app.openapi({ ...op, middleware } as R, handler as never);
    return;
  }
  // Path parameters declared as plain strings cannot fail their schema (a path parameter is always
  // a string): they are taken as validated as they are, without zod's asynchronous parse, which
  // cost about 45 µs of a cold intake answer (docs/performance.md). The operation is registered
  // for /openapi.json exactly as declared.
  app.openAPIRegistry.registerPath(op);
  const unparsed = { ...op, request: { ...op.request, params: undefined }, middleware: [paramsAsSent, ...middleware] };
  app.openapi({ ...unparsed, hide: true } as unknown as R, handler as never);
}

/** Whether an operation's path parameters are all plain strings (no check, no transform): none fails. */
function plainParams(params: unknown): boolean {
  if (!(params instanceof z.ZodObject)) return false;
  return Object.values(params.shape as Record<string, unknown>).every(
    (s) => s instanceof z.ZodString && !s._zod.def.checks?.length && !s._zod.def.coerce,
  );
}

/** The path parameters as the router decoded them, as the validator would have passed them on. */
const paramsAsSent: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.req.addValidatedData('param', c.req.param() as Record<string, string>);
  await next();
};

/**
 * Who keeps an operation's Idempotency-Key answers: authenticated POSTs per organization; the
 * credential-less POSTs under /v1 in the public scope, unless they define the header themselves (a
 * sandbox's key makes its token); nobody for an operation on the caller's own credentials
 * (x-never-replayed: sign-out, switch), which runs every time.
 */
function keeperOf(op: Operation & RouteConfig): MiddlewareHandler<AppEnv> | null {
  if (op.method !== 'post' || op['x-never-replayed']) return null;
  if (op['x-scope'] !== 'public') return idempotency;
  return op.path.startsWith('/v1/') && !declaresHeader(op, 'idempotency-key') ? publicIdempotency : null;
}
