import crypto from 'node:crypto';
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import type { Db } from '../db/client.js';
import { codeTries } from '../db/schema.js';
import { limitKey } from '../domain/limit-key.js';

export { deleteOldCodeTries } from '../worker/code-tries-expiry.js';

/** A try at an email code, taken before the code is compared; releaseCodeTry gives it back to the address. */
export interface CodeTry {
  id: string;
}

/** Advisory-lock namespace of the sign-in limits (apart from the code-request throttle's and the migration's). */
const TRY_LOCK = 7_271_003;

/**
 * Seconds until the oldest of the `limit` newest rows matching `where` leaves the window, or null
 * when fewer than `limit` rows are in it.
 */
async function wait(
  tx: Pick<Db, 'select'>,
  where: ReturnType<typeof and>,
  limit: number,
  t: Date,
  windowS: number,
): Promise<number | null> {
  if (limit < 1) return windowS;
  const since = new Date(t.getTime() - windowS * 1000);
  const rows = await tx
    .select({ createdAt: codeTries.createdAt })
    .from(codeTries)
    .where(and(where, gt(codeTries.createdAt, since)))
    .orderBy(asc(codeTries.createdAt))
    .limit(limit);
  if (rows.length < limit) return null;
  const freeAt = rows[0].createdAt.getTime() + windowS * 1000;
  return Math.max(1, Math.ceil((freeAt - t.getTime()) / 1000));
}

/**
 * Takes one try at the code of `email` for a request from `clientIp`, or refuses with 429 and
 * Retry-After: one budget of wrong guesses per address across all its codes
 * (SIGN_IN_GUESSES_PER_ADDRESS), and one limit of verify-code and sign-in requests per client IP
 * (SIGN_IN_TRIES_PER_IP), both within SIGN_IN_WINDOW_S. The try counts as a wrong guess until the
 * code proves right, or the request is refused before any code is compared (releaseCodeTry). Counted in the database under advisory locks on the address and the
 * IP, so concurrent requests and other processes cannot slip past the limits.
 */
export async function takeCodeTry(deps: Deps, email: string | null, clientIp: string): Promise<CodeTry> {
  const { config, database, now } = deps;
  const ip = limitKey(clientIp);
  const t = now();
  const id = crypto.randomUUID();
  const retry = await database.db.transaction(async (tx) => {
    // Always address first, then IP: one lock order, no deadlock.
    if (email) await tx.execute(sql`select pg_advisory_xact_lock(${TRY_LOCK}, hashtext(${`a:${email}`}))`);
    await tx.execute(sql`select pg_advisory_xact_lock(${TRY_LOCK}, hashtext(${`i:${ip}`}))`);
    const window = config.signInWindowS;
    const waits = await Promise.all([
      email
        ? wait(
            tx,
            and(eq(codeTries.email, email), eq(codeTries.wrong, true)),
            config.signInGuessesPerAddress,
            t,
            window,
          )
        : null,
      wait(tx, eq(codeTries.ip, ip), config.signInTriesPerIp, t, window),
    ]);
    const longest = Math.max(...waits.map((w) => w ?? 0));
    if (longest > 0) return { longest, address: waits[0] !== null };
    await tx.insert(codeTries).values({ id, email, ip, createdAt: t });
    return null;
  });
  if (retry) {
    throw new ApiError(
      'rate_limited',
      retry.address ? 'Too many wrong codes for this address.' : 'Too many sign-in attempts from this network.',
      {
        hint: `Wait ${retry.longest} seconds (Retry-After), then try again; a new code does not reset the count.`,
        headers: { 'Retry-After': String(retry.longest) },
        details: { retry_after_s: retry.longest },
      },
    );
  }
  return { id };
}

/**
 * This try was no wrong guess (the code was right, or the request was refused before a code was
 * compared): it no longer counts against the address. It still counts for the IP.
 */
export async function releaseCodeTry(deps: Deps, attempt: CodeTry): Promise<void> {
  await deps.database.db.update(codeTries).set({ wrong: false }).where(eq(codeTries.id, attempt.id));
}
