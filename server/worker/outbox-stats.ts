import type { Database } from '../db/client.js';
import { OUTBOX, type OutboxKind } from './outbox.js';

/**
 * Statistics for an outbox table before its first backlog. A fresh database has none until
 * autovacuum first visits it (up to a minute later, by default), and a claim planned without them
 * locked its few rows through a bitmap of every due row (the candidate scan itself no longer
 * depends on statistics: see migration 0009). So the first claim of this process that takes 64
 * rows or more (a backlog) has the table analyzed, if it never was; prepared plans are made again
 * with the new statistics.
 */
export class OutboxStats {
  private readonly settled = new Set<OutboxKind>();
  private readonly running = new Set<OutboxKind>();

  constructor(private readonly database: Database) {}

  /** A claim of this outbox found a backlog: analyzes its table once, if it never was. */
  backlog(kind: OutboxKind, onError: (err: unknown) => void) {
    if (this.settled.has(kind) || this.running.has(kind)) return;
    this.running.add(kind);
    void this.ensure(kind)
      .then(() => this.settled.add(kind), onError)
      .finally(() => this.running.delete(kind));
  }

  private async ensure(kind: OutboxKind) {
    const { table } = OUTBOX[kind];
    const [row] = await this.database.prepared<{ never: boolean }>(
      `select (last_analyze is null and last_autoanalyze is null) as never
       from pg_stat_user_tables where relname = $1::text`,
      [table],
    );
    if (row?.never) await this.database.prepared(`analyze ${table}`, []);
  }
}
