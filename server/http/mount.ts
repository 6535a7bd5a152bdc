import type { OpenAPIHono, RouteConfig, RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
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
  app.openapi({ ...op, middleware } as R, handler as never);
}

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
