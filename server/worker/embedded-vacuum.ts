import type { Deps } from '../core/deps.js';

/** A table is vacuumed once this many of its rows are dead (plus VACUUM_MIN), analyzed likewise. */
const VACUUM_FACTOR = 0.1;
const ANALYZE_FACTOR = 0.05;
const VACUUM_MIN = 500;

interface TableStats {
  relname: string;
  dead: number;
  modified: number;
  live: number;
}

export interface EmbeddedVacuumReport {
  vacuumed: string[];
  analyzed: string[];
}

/**
 * Autovacuum for embedded PGlite, which has none: it is one process with no launcher, so without
 * this its tables never give back the room of dead rows and its planner statistics never follow
 * the data. The outboxes suffer most: every delivery leaves two dead row versions (pending →
 * sending → sent) and index entries behind, so a long-running embedded server would grow its
 * outbox and slow its claims for ever. A housekeeping job (every HOUSEKEEPING_MS): the tables whose
 * dead rows pass 10 % of their live ones (at least 500) are vacuumed and analyzed, those with as
 * many rows changed since their last analyze only analyzed, as autovacuum would on PostgreSQL.
 * On PostgreSQL this does nothing: autovacuum does it there.
 */
export async function vacuumEmbedded(deps: Deps): Promise<EmbeddedVacuumReport> {
  const report: EmbeddedVacuumReport = { vacuumed: [], analyzed: [] };
  const { database } = deps;
  if (database.kind !== 'pglite') return report;
  // Counters reach pg_stat_user_tables when this process's statistics are flushed: now.
  await database.prepared('select pg_stat_force_next_flush()', []);
  const tables = await database.prepared<TableStats>(
    `select relname, n_dead_tup::int as dead, n_mod_since_analyze::int as modified, n_live_tup::int as live
     from pg_stat_user_tables where schemaname = 'public' order by relname`,
    [],
  );
  for (const t of tables) {
    const name = `"${t.relname.replace(/"/g, '""')}"`;
    if (t.dead >= VACUUM_MIN + VACUUM_FACTOR * t.live) {
      await database.prepared(`vacuum (analyze) ${name}`, []);
      report.vacuumed.push(t.relname);
    } else if (t.modified >= VACUUM_MIN + ANALYZE_FACTOR * t.live) {
      await database.prepared(`analyze ${name}`, []);
      report.analyzed.push(t.relname);
    }
  }
  return report;
}
