import type { Database } from '../db/client.js';

/**
 * Each depth series counts at most this many rows. A full count of a 10-million-row outbox on every
 * scrape would read the whole table (or its index) each time; a capped count reads at most this
 * many index entries per series through the (status, next_attempt_at) index, whatever the backlog
 * (pg_class estimates were the other choice: free, but per table, not per status, and stale
 * between analyzes). A reading at the cap means "at least this many": alert on the age of the
 * oldest due row, which stays exact.
 */
export const OUTBOX_DEPTH_CAP = 10_000;

const STATUSES = ['pending', 'failed', 'sending', 'held'] as const;
const OUTBOXES = { delivery: 'deliveries', hook: 'system_webhook_deliveries' } as const;

export interface OutboxDepth {
  rows: { outbox: string; status: string; count: number }[];
  /** seconds since the oldest due pending or failed row fell due, per outbox */
  oldestDueS: Record<string, number>;
}

const counts = Object.entries(OUTBOXES).flatMap(([outbox, table]) =>
  STATUSES.map(
    (status) =>
      `select '${outbox}' as outbox, '${status}' as status, (select count(*) from (select 1 from ${table} ` +
      `where status = '${status}' limit ${OUTBOX_DEPTH_CAP}) c) as n`,
  ),
);
// The first entry of the due index per status: one index probe each.
const oldest = Object.entries(OUTBOXES).map(
  ([outbox, table]) =>
    `select '${outbox}' as outbox, 'oldest' as status, extract(epoch from (now() - least(` +
    `(select min(next_attempt_at) from ${table} where status = 'pending' and next_attempt_at <= now()), ` +
    `(select min(next_attempt_at) from ${table} where status = 'failed' and next_attempt_at <= now()))))::float8 as n`,
);
const STATEMENT = [...counts, ...oldest].join('\nunion all\n');

/** One read of every depth series, bounded in cost (see OUTBOX_DEPTH_CAP). */
export async function readOutboxDepth(database: Database): Promise<OutboxDepth> {
  const rows = await database.prepared<{ outbox: string; status: string; n: string | number | null }>(STATEMENT, []);
  const out: OutboxDepth = { rows: [], oldestDueS: {} };
  for (const r of rows) {
    if (r.status === 'oldest') out.oldestDueS[r.outbox] = Math.max(0, Number(r.n ?? 0));
    else out.rows.push({ outbox: r.outbox, status: r.status, count: Number(r.n) });
  }
  return out;
}
