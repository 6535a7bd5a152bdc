import crypto from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../core/errors.js';
import { idempotencyKeys } from '../db/schema.js';
import { sha256 } from '../domain/secrets.js';
import { KEY_TTL_MS } from '../worker/idempotency-expiry.js';
import type { AppEnv } from './context.js';

export { deleteExpiredKeys, KEY_TTL_MS } from '../worker/idempotency-expiry.js';

const WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The scope the credential-less POSTs keep their keys in (organization ids never look like it). */
export const PUBLIC_SCOPE = 'public';
/** An answer as kept: what a replay sends again. */
interface Kept {
  status: number;
  body: string;
  type: string | null;
  /** Set-Cookie values (a sign-in's session) */
  cookies: string[];
}

/** How one kind of operation keeps its keys: where, and under which name. */
interface Keeping {
  scope(c: Context<AppEnv>): string;
  /** the key as the table holds it, given the hash of the request (method, path, body) */
  name(key: string, hash: string): string;
}

/** Authenticated POSTs: keys per organization, named as sent, so another body under a key is told 409. */
const BY_ORGANIZATION: Keeping = {
  scope: (c) => c.get('actor').orgId,
  name: (key) => key,
};

/**
 * The credential-less POSTs under /v1 (the email-code sign-in, request-code, the billing webhook):
 * keys in one public scope, the row named by a hash of the key *and* the request. Another body under
 * the same key is another row: it runs as a request of its own (a wrong code is answered as a wrong
 * code, and counts as one) and learns nothing of what the key answered first. Only a request that
 * repeats the first one exactly (the right code included) finds its answer.
 */
const PUBLIC: Keeping = {
  scope: () => PUBLIC_SCOPE,
  name: (key, hash) => sha256(`formsvc idempotency key\n${key}\n${hash}`),
};

/** Marks a sealed answer in response_type (rows of before sealing hold the answer as sent). */
const SEALED = 'sealed';
const sealKey = (key: string, hash: string) =>
  crypto.createHash('sha256').update(`formsvc idempotency seal\n${key}\n${hash}`).digest();

/**
 * Every kept answer is sealed (AES-256-GCM, Set-Cookie included) under a hash of the key and the
 * request: answers may hold a one-time secret (a minted API key, a session, a webhook secret), and
 * the table never holds one in the clear. Only the client that holds the key and sends the same
 * request again can have it answered.
 */
function seal(key: string, hash: string, kept: Kept): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', sealKey(key, hash), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(kept), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

function unseal(
  key: string,
  hash: string,
  row: { status: number; responseBody: string | null; responseType: string | null },
): Kept {
  if (row.responseType !== SEALED) {
    return { status: row.status, body: row.responseBody ?? '', type: row.responseType, cookies: [] };
  }
  const raw = Buffer.from(row.responseBody ?? '', 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', sealKey(key, hash), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  return JSON.parse(text) as Kept;
}

/**
 * Idempotency-Key on POSTs under /v1: the first request with a key runs and its answer is kept; a
 * replay with the same body gets the kept answer, another body 409 idempotency_conflict (in the
 * public scope another body is another request, see PUBLIC). A concurrent replay waits for the first to finish, so one resource is made. 5xx answers are not
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
    const hash = sha256(`${c.req.method} ${c.req.path}\n${await c.req.text()}`);
    const name = keeping.name(key, hash);
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
          const kept = unseal(key, hash, { ...row, status: row.status });
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
      .set({ status: res.status, responseBody: seal(key, hash, kept), responseType: SEALED })
      .where(where);
  };
  return (c, next) => run(c, next, 0);
}

/** Idempotency-Key on authenticated POSTs, kept per organization. */
export const idempotency = keepIdempotency(BY_ORGANIZATION);

/** Idempotency-Key on the credential-less POSTs under /v1, named by key and request (see PUBLIC). */
export const publicIdempotency = keepIdempotency(PUBLIC);
