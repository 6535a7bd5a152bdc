import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import type { Logger } from '../log.js';
import { WAKE_CHANNEL } from './worker.js';

/**
 * The `wake` of Deps: wakes this process's worker at once and, on a PostgreSQL server, sends one
 * NOTIFY (coalesced per event-loop turn) so workers in other processes wake too.
 */
export function createWaker(database: Database, log: Logger, local: () => void): () => void {
  let queued = false;
  return () => {
    local();
    if (database.kind !== 'postgres' || queued) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      database
        .rows(sql`select pg_notify(${WAKE_CHANNEL}, '')`)
        .catch((err) => log.warn({ err: String(err) }, 'NOTIFY failed; other workers wake on their tick'));
    });
  };
}
