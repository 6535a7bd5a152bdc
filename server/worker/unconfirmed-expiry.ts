import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import { attachments, deliveries, submissions } from '../db/schema.js';
import { deleteChunks } from '../files/postgres.js';
import { deleteAttempts } from './attempts.js';

/** Submissions deleted per run at most: one run stays short. */
const BATCH = 500;
const DEFAULT_EXPIRES_HOURS = 168;

/**
 * Housekeeping: double opt-in submissions never confirmed are deleted a day after their link
 * expired (the form's `settings.confirm.expires_hours`, default 168), with their held deliveries,
 * their confirmation mail and their files. The rows are locked and checked pending again, so a
 * confirmation committing meanwhile keeps its submission.
 */
export async function deleteUnconfirmed(deps: Deps): Promise<number> {
  const now = deps.now().toISOString();
  const due = await deps.database.rows<{ id: string }>(sql`
    select s.id from submissions s join forms f on f.id = s.form_id
    where s.quarantine_reason = 'pending_confirmation'
      and s.received_at < ${now}::timestamptz - make_interval(hours => 24 + coalesce(
        case when jsonb_typeof(f.settings->'confirm'->'expires_hours') = 'number'
          then (f.settings->'confirm'->>'expires_hours')::int end, ${DEFAULT_EXPIRES_HOURS}))
    order by s.received_at limit ${BATCH}`);
  if (!due.length) return 0;
  const ids = due.map((r) => r.id);
  const done = await deps.database.db.transaction(async (tx) => {
    const locked = await tx
      .select({ id: submissions.id })
      .from(submissions)
      .where(and(inArray(submissions.id, ids), eq(submissions.quarantineReason, 'pending_confirmation')))
      .for('update', { skipLocked: true });
    const doomed = locked.map((r) => r.id);
    if (!doomed.length) return { n: 0, files: [] as string[] };
    await deleteAttempts(tx, inArray(deliveries.submissionId, doomed));
    await tx.delete(deliveries).where(inArray(deliveries.submissionId, doomed));
    const files = await tx
      .delete(attachments)
      .where(inArray(attachments.submissionId, doomed))
      .returning({ id: attachments.id, key: attachments.storageKey });
    await deleteChunks(
      tx,
      files.map((f) => f.id),
    );
    await tx.delete(submissions).where(inArray(submissions.id, doomed));
    return { n: doomed.length, files: files.map((f) => f.key) };
  });
  await Promise.all(done.files.map((key) => deps.storage.remove(key).catch(() => {})));
  if (done.n) deps.log.info({ submissions: done.n }, 'deleted unconfirmed double opt-in submissions');
  return done.n;
}
