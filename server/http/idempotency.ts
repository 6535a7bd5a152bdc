import { and, eq } from 'drizzle-orm';
import type { MiddlewareHandler } from 'hono';
import { idempotencyKeys } from '../db/schema.js';
import { sha256 } from '../services/secrets.js';
import type { AppEnv } from './context.js';
import { ApiError } from './errors.js';

const WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Idempotency-Key on authenticated POSTs: the first request with a key runs and its answer is
 * stored; a replay with the same body gets the stored answer, another body 409
 * idempotency_conflict. A concurrent replay waits for the first to finish, so one resource is made.
 * 5xx answers are not stored (the key may be retried).
 */
export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  const key = c.req.header('idempotency-key');
  if (key === undefined) return next();
  if (key.length < 1 || key.length > 255) {
    throw new ApiError('validation_failed', 'Idempotency-Key must be 1 to 255 characters.', {
      details: { issues: [{ path: 'Idempotency-Key', message: '1 to 255 characters' }] },
    });
  }
  const { database } = c.get('deps');
  const db = database.db;
  const scope = c.get('actor').orgId;
  const hash = sha256(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
  const where = and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key));

  const claimed = await db
    .insert(idempotencyKeys)
    .values({ scope, key, requestHash: hash })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });

  if (claimed.length === 0) {
    const until = Date.now() + WAIT_MS;
    for (;;) {
      const [row] = await db.select().from(idempotencyKeys).where(where).limit(1);
      if (!row) break; // the first attempt failed and released the key: run this one
      if (row.requestHash !== hash) {
        throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request.');
      }
      if (row.status !== null) {
        c.header('Idempotent-Replayed', 'true');
        return c.body(row.responseBody ?? '', row.status as 200, {
          'content-type': row.responseType ?? 'application/json',
        });
      }
      if (Date.now() > until) {
        throw new ApiError('conflict', 'A request with this Idempotency-Key is still in progress.', {
          hint: 'Wait a moment and send the same request again.',
        });
      }
      await sleep(50);
    }
    return idempotency(c, next);
  }

  await next();
  const res = c.res;
  if (res.status >= 500) {
    await db.delete(idempotencyKeys).where(where);
    return;
  }
  const text = await res.clone().text();
  await db
    .update(idempotencyKeys)
    .set({ status: res.status, responseBody: text, responseType: res.headers.get('content-type') })
    .where(where);
};
