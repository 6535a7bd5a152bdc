import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { PLANS } from '../../shared/plans.js';
import type { Deps } from '../core/deps.js';
import { attachments, deliveries, submissions } from '../db/schema.js';
import { deleteChunks } from '../files/postgres.js';
import { deleteAttempts } from './attempts.js';

/** Submissions (and digest deliveries) deleted per run at most: one run stays short. */
export const RETENTION_BATCH = 500;

/** Delivery states that are over: only a submission whose deliveries are all in them may go. */
const FINISHED = ['sent', 'dead', 'skipped'];

export interface RetentionResult {
  submissions: number;
  attachments: number;
  deliveries: number;
}

/**
 * `(plan, retention_days)` rows of the configured limits, and the plan in force of organization
 * `o` in SQL: the same rule as effectivePlan (an expired plan falls back to free). A plan missing
 * from the table (unknown name) joins nothing, so its data is kept.
 */
function retentionSql(deps: Deps, now: string) {
  const rows = PLANS.map((p) => sql`(${p}::text, ${deps.config.planLimits[p].retention_days}::int)`);
  return {
    limits: sql`lim(plan, days) as (values ${sql.join(rows, sql`, `)})`,
    joinOrg: sql`join lim on lim.plan = case when o.plan_expires_at is not null and o.plan_expires_at <= ${now}::timestamptz then 'free' else o.plan end`,
  };
}

/**
 * Deletes what an organization's plan no longer keeps: submissions received more than the plan's
 * `retention_days` ago (null keeps forever), or than their form's `settings.retention_days` when
 * that is shorter, with their attachment rows and stored files and their
 * deliveries. A submission with a delivery still to send (pending, failed, sending or held) is kept
 * until that delivery is over. Digest deliveries past retention (their payload copies submission
 * data) go too. Bounded per run; what is left waits for the next run.
 */
export async function applyRetention(deps: Deps): Promise<RetentionResult> {
  const now = deps.now().toISOString();
  const { limits, joinOrg } = retentionSql(deps, now);
  const cutoff = sql`${now}::timestamptz - make_interval(days => lim.days)`;
  const finished = sql.join(
    FINISHED.map((s) => sql`${s}`),
    sql`, `,
  );
  // One index probe per organization with a finite retention (submissions_org_received).
  const candidates = await deps.database.rows<{ id: string; org_id: string }>(sql`
    with ${limits}
    select s.id, s.org_id from organizations o ${joinOrg}
    cross join lateral (
      select s.id, s.org_id from submissions s
      where s.org_id = o.id and s.received_at < ${cutoff}
        and not exists (
          select 1 from deliveries d where d.submission_id = s.id and d.status not in (${finished}))
      order by s.received_at, s.id
      limit ${RETENTION_BATCH}
    ) s
    where lim.days is not null
    limit ${RETENTION_BATCH}`);
  const byOrg = new Map<string, string[]>();
  const ids = new Set<string>();
  for (const c of [...candidates, ...(await formCandidates(deps, now, finished))]) {
    if (ids.has(c.id)) continue;
    ids.add(c.id);
    byOrg.set(c.org_id, [...(byOrg.get(c.org_id) ?? []), c.id]);
  }
  const total: RetentionResult = { submissions: 0, attachments: 0, deliveries: 0 };
  for (const [orgId, ids] of byOrg) {
    const r = await deleteSubmissions(deps, orgId, ids);
    total.submissions += r.submissions;
    total.attachments += r.attachments;
    total.deliveries += r.deliveries;
  }
  total.deliveries += await deleteOldDigests(deps, limits, joinOrg, cutoff, finished);
  if (total.submissions || total.deliveries) deps.log.info(total, 'retention deleted expired data');
  return total;
}

/**
 * Submissions past their form's own `settings.retention_days`. The plan's retention is applied by
 * the organization pass above, so together each submission goes after the shorter of the two (a
 * plan that keeps forever leaves the form's). Oldest first through submissions_form (ids grow with
 * time), so each form's probe stops at its first young row.
 */
async function formCandidates(deps: Deps, now: string, finished: SQL) {
  return deps.database.rows<{ id: string; org_id: string }>(sql`
    select s.id, s.org_id from forms f
    cross join lateral (
      select s.id, s.org_id from submissions s
      where s.form_id = f.id
        and s.received_at < ${now}::timestamptz - make_interval(days => greatest(1, floor((f.settings->>'retention_days')::numeric))::int)
        and not exists (
          select 1 from deliveries d where d.submission_id = s.id and d.status not in (${finished}))
      order by s.id
      limit ${RETENTION_BATCH}
    ) s
    where jsonb_typeof(f.settings->'retention_days') = 'number'
    limit ${RETENTION_BATCH}`);
}

/**
 * One organization's batch in one transaction. The submissions are locked SKIP LOCKED (another
 * process deleting them now makes this one pass), then their deliveries, so the state of every
 * delivery is checked again under lock: a delivery retried in the meantime keeps its submission.
 * Files are removed after the commit; a file that cannot be removed is logged, never restored.
 */
async function deleteSubmissions(deps: Deps, orgId: string, ids: string[]): Promise<RetentionResult> {
  const done = await deps.database.db.transaction(async (tx) => {
    const locked = await tx
      .select({ id: submissions.id })
      .from(submissions)
      .where(and(eq(submissions.orgId, orgId), inArray(submissions.id, ids)))
      .for('update', { skipLocked: true });
    if (!locked.length) return null;
    const lockedIds = locked.map((r) => r.id);
    const states = await tx
      .select({ submissionId: deliveries.submissionId, status: deliveries.status })
      .from(deliveries)
      .where(and(eq(deliveries.orgId, orgId), inArray(deliveries.submissionId, lockedIds)))
      .for('update');
    const busy = new Set(states.filter((d) => !FINISHED.includes(d.status)).map((d) => d.submissionId));
    const doomed = lockedIds.filter((id) => !busy.has(id));
    if (!doomed.length) return null;
    await deleteAttempts(tx, and(eq(deliveries.orgId, orgId), inArray(deliveries.submissionId, doomed)));
    const gone = await tx
      .delete(deliveries)
      .where(and(eq(deliveries.orgId, orgId), inArray(deliveries.submissionId, doomed)))
      .returning({ id: deliveries.id });
    const files = await tx
      .delete(attachments)
      .where(and(eq(attachments.orgId, orgId), inArray(attachments.submissionId, doomed)))
      .returning({ id: attachments.id, key: attachments.storageKey });
    await deleteChunks(
      tx,
      files.map((f) => f.id),
    );
    const deleted = await tx
      .delete(submissions)
      .where(and(eq(submissions.orgId, orgId), inArray(submissions.id, doomed)))
      .returning({ id: submissions.id });
    return { submissions: deleted.length, deliveries: gone.length, files: files.map((f) => f.key) };
  });
  if (!done) return { submissions: 0, attachments: 0, deliveries: 0 };
  await Promise.all(
    done.files.map((key) =>
      deps.storage
        .remove(key)
        .catch((err) => deps.log.warn({ org_id: orgId, err: String(err) }, 'retention could not remove a file')),
    ),
  );
  return { submissions: done.submissions, attachments: done.files.length, deliveries: done.deliveries };
}

/** Finished digest deliveries (no submission of their own) created before their organization's retention. */
async function deleteOldDigests(deps: Deps, limits: SQL, joinOrg: SQL, cutoff: SQL, finished: SQL) {
  const rows = await deps.database.rows<{ id: string }>(sql`
    with ${limits}, gone as (
      delete from deliveries where id in (
        select d.id from deliveries d
        join organizations o on o.id = d.org_id ${joinOrg}
        where d.submission_id is null and lim.days is not null
          and d.status in (${finished}) and d.created_at < ${cutoff}
        limit ${RETENTION_BATCH}
        for update of d skip locked)
      returning id
    ), att as (delete from delivery_attempts where delivery_id in (select id from gone))
    select id from gone`);
  return rows.length;
}
