import crypto from 'node:crypto';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Context, MiddlewareHandler } from 'hono';
import type { Database } from '../db/client.js';
import { idempotencyKeys } from '../db/schema.js';
import { sha256 } from '../services/secrets.js';
import type { AppEnv } from './context.js';
import { ApiError } from './errors.js';

const WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The scope the credential-less POSTs keep their keys in (organization ids never look like it). */
export const PUBLIC_SCOPE = 'public';
/**
 * How long a key is kept (answered again), in every scope: a request repeated later runs again, and
 * housekeeping deletes the key. A client retries within minutes; the table stays bounded.
 */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

/** An answer as kept: what a replay sends again. */
interface Kept {
  status: number;
  body: string;
  type: string | null;
  /** Set-Cookie values (a sign-in's session) */
  cookies: string[];
}

/** How one kind of operation keeps its keys: where, under which name, and how its answers are stored. */
interface Keeping {
  scope(c: Context<AppEnv>): string;
  /** the key as the table holds it */
  name(key: string): string;
  store(key: string, kept: Kept): { responseBody: string; responseType: string | null };
  load(key: string, row: { status: number; responseBody: string | null; responseType: string | null }): Kept;
}

/**
 * Authenticated POSTs: keys per organization, answers stored as sent (they hold no secret that
 * GET would not show; a created key's secret is shown once and made again by nothing).
 */
const BY_ORGANIZATION: Keeping = {
  scope: (c) => c.get('actor').orgId,
  name: (key) => key,
  store: (_key, kept) => ({ responseBody: kept.body, responseType: kept.type }),
  load: (_key, row) => ({ status: row.status, body: row.responseBody ?? '', type: row.responseType, cookies: [] }),
};

/** Marks a sealed answer in response_type. */
const SEALED = 'sealed';
const sealKey = (key: string) => crypto.createHash('sha256').update(`formsvc idempotency seal\n${key}`).digest();

/**
 * The credential-less POSTs under /v1 (the email-code sign-in, sign-out, the billing webhook):
 * keys in one public scope, kept 24 h. Their answers carry one-time secrets (an API key, a session
 * cookie), so the table holds neither the key nor the answer in the clear: the row is found by a
 * hash of the key, and the answer (Set-Cookie included) is sealed with AES-256-GCM under another
 * hash of the key. Only a client that holds the key can have it answered again.
 */
const PUBLIC: Keeping = {
  scope: () => PUBLIC_SCOPE,
  name: (key) => sha256(`formsvc idempotency key\n${key}`),
  store(key, kept) {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', sealKey(key), iv);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(kept), 'utf8'), cipher.final()]);
    return { responseBody: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64'), responseType: SEALED };
  },
  load(key, row) {
    const raw = Buffer.from(row.responseBody ?? '', 'base64');
    const decipher = crypto.createDecipheriv('aes-256-gcm', sealKey(key), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Kept;
  },
};

/**
 * Idempotency-Key on POSTs under /v1: the first request with a key runs and its answer is kept; a
 * replay with the same body gets the kept answer, another body 409 idempotency_conflict. A
 * concurrent replay waits for the first to finish, so one resource is made. 5xx answers are not
 * kept (the key may be retried).
 */
function keepIdempotency(keeping: Keeping): MiddlewareHandler<AppEnv> {
  /** `taken`: how often this request found the key released (failed or expired) and took it again. */
  const run = async (c: Context<AppEnv>, next: () => Promise<void>, taken: number): Promise<Response | undefined> => {
    const key = c.req.header('idempotency-key');
    if (key === undefined) {
      await next();
      return undefined;
    }
    if (key.length < 1 || key.length > 255) {
      throw new ApiError('validation_failed', 'Idempotency-Key must be 1 to 255 characters.', {
        details: { issues: [{ path: 'Idempotency-Key', message: '1 to 255 characters' }] },
      });
    }
    const { database, now } = c.get('deps');
    const db = database.db;
    const scope = keeping.scope(c);
    const name = keeping.name(key);
    const hash = sha256(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
    const where = and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, name));

    const claimed = await db
      .insert(idempotencyKeys)
      .values({ scope, key: name, requestHash: hash, createdAt: now() })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });

    if (claimed.length === 0) {
      const until = Date.now() + WAIT_MS;
      for (;;) {
        const [row] = await db.select().from(idempotencyKeys).where(where).limit(1);
        if (!row) break; // the first attempt failed and released the key: run this one
        const cutoff = new Date(now().getTime() - KEY_TTL_MS);
        if (row.createdAt < cutoff) {
          // Expired: taken again by this request (unless another one took it first).
          await db.delete(idempotencyKeys).where(and(where, lt(idempotencyKeys.createdAt, cutoff)));
          break;
        }
        if (row.requestHash !== hash) {
          throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request.');
        }
        if (row.status !== null) {
          const kept = keeping.load(key, { ...row, status: row.status });
          c.header('Idempotent-Replayed', 'true');
          for (const cookie of kept.cookies) c.header('Set-Cookie', cookie, { append: true });
          return c.body(kept.body, kept.status as 200, { 'content-type': kept.type ?? 'application/json' });
        }
        if (Date.now() > until) {
          throw new ApiError('conflict', 'A request with this Idempotency-Key is still in progress.', {
            hint: 'Wait a moment and send the same request again.',
          });
        }
        await sleep(50);
      }
      // Taken again at most a few times: a key that keeps going away under this request is an error.
      if (taken >= 3) {
        throw new ApiError('conflict', 'A request with this Idempotency-Key keeps failing elsewhere.', {
          hint: 'Send the same request again in a moment.',
        });
      }
      return run(c, next, taken + 1);
    }

    await next();
    const res = c.res;
    if (res.status >= 500) {
      await db.delete(idempotencyKeys).where(where);
      return;
    }
    const kept: Kept = {
      status: res.status,
      body: await res.clone().text(),
      type: res.headers.get('content-type'),
      cookies: res.headers.getSetCookie(),
    };
    await db
      .update(idempotencyKeys)
      .set({ status: res.status, ...keeping.store(key, kept) })
      .where(where);
  };
  return (c, next) => run(c, next, 0);
}

/** Idempotency-Key on authenticated POSTs, kept per organization. */
export const idempotency = keepIdempotency(BY_ORGANIZATION);

/** Idempotency-Key on the credential-less POSTs under /v1, kept 24 h and sealed (see PUBLIC). */
export const publicIdempotency = keepIdempotency(PUBLIC);

/** Housekeeping: deletes the keys older than 24 h (KEY_TTL_MS), of every scope, a bounded batch per run. */
export async function deleteExpiredKeys(deps: { database: Database; now: () => Date }, batch = 1000) {
  const cutoff = new Date(deps.now().getTime() - KEY_TTL_MS);
  const gone = await deps.database.rows(sql`
    delete from idempotency_keys where (scope, key) in (
      select scope, key from idempotency_keys where created_at < ${cutoff.toISOString()} limit ${batch}
    )
    returning 1`);
  return { deleted: gone.length };
}
