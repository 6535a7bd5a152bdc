import { sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';

/** Housekeeping: deletes the tries older than the window (at least a day), a bounded batch per run. */
export async function deleteOldCodeTries(deps: Deps, batch = 1000) {
  const keepS = Math.max(86_400, deps.config.signInWindowS);
  const cutoff = new Date(deps.now().getTime() - keepS * 1000);
  const gone = await deps.database.rows(sql`
    delete from code_tries where id in (
      select id from code_tries where created_at < ${cutoff.toISOString()} limit ${batch}
    )
    returning 1`);
  return { deleted: gone.length };
}
