import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';

/**
 * How long a key is kept (answered again), in every scope: a request repeated later runs again, and
 * housekeeping deletes the key. A client retries within minutes; the table stays bounded.
 */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

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
