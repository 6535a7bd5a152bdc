import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';

/** Rows one statement indexes: large enough to amortise the statement, small enough to hold few locks briefly. */
export const SEARCH_INDEX_BATCH = 500;

/**
 * Writes the search text of up to `batch` submissions that have none yet (intake stores them
 * without it, so an insert pays no trigram-index cost) and answers how many it wrote. Safe in
 * several processes at once: each takes rows the others have not locked.
 */
export async function indexSearchBatch(database: Database, batch = SEARCH_INDEX_BATCH): Promise<number> {
  const rows = await database.rows(sql`
    update submissions s set search_text = formsvc_search_text(s.id, s.data)
    where s.id in (select id from submissions where search_text is null limit ${batch} for update skip locked)
    returning 1`);
  return rows.length;
}
