import { and, asc, eq, inArray, isNotNull, min, sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import { deliveries, organizations, submissions } from '../db/schema.js';
import { limitsOf } from '../domain/orgs.js';
import { quotaUsed } from '../domain/quota.js';
import { dueNowUnlessDisabled } from './disable.js';

/** Organizations looked at per run, and submissions released per organization per run: one run stays short. */
const ORGS_PER_RUN = 200;
const SUBMISSIONS_PER_ORG = 500;

export interface ReleaseResult {
  submissions: number;
  deliveries: number;
}

/**
 * Releases held deliveries (planned for over-quota submissions) of every organization whose plan
 * allows again: the month rolled over, or its limit rose (a plan change, a larger PLAN_LIMITS). Whole submissions are released, oldest first, at most as many as the month's
 * remaining allowance (each one released counts as used); their deliveries become pending and due
 * now, and the worker is woken.
 */
export async function releaseHeld(deps: Deps): Promise<ReleaseResult> {
  const { db } = deps.database;
  // Random order: organizations that stay over quota cannot crowd the others out of a bounded run.
  const orgIds = await db
    .select({ orgId: deliveries.orgId })
    .from(deliveries)
    .where(eq(deliveries.status, 'held'))
    .groupBy(deliveries.orgId)
    .orderBy(sql`random()`)
    .limit(ORGS_PER_RUN);
  const total: ReleaseResult = { submissions: 0, deliveries: 0 };
  for (const { orgId } of orgIds) {
    const r = await releaseOrg(deps, orgId);
    total.submissions += r.submissions;
    total.deliveries += r.deliveries;
  }
  if (total.deliveries) {
    deps.log.info(total, 'released held deliveries of over-quota submissions');
    deps.wake();
  }
  return total;
}

/**
 * One organization, in one transaction. Its row is locked (SKIP LOCKED: another process releasing
 * it now makes this one pass), so the allowance is counted and spent by one process at a time and
 * two workers never release the same month's room twice; the update is conditional on `held` too.
 */
async function releaseOrg(deps: Deps, orgId: string): Promise<ReleaseResult> {
  const now = deps.now();
  return deps.database.db.transaction(async (tx) => {
    const [org] = await tx
      .select()
      .from(organizations)
      .where(eq(organizations.id, orgId))
      .for('no key update', { skipLocked: true });
    if (!org) return { submissions: 0, deliveries: 0 };
    const max = limitsOf(deps.config, org, now).submissions_per_month;
    const room =
      max === null ? SUBMISSIONS_PER_ORG : Math.min(SUBMISSIONS_PER_ORG, max - (await quotaUsed(tx, orgId, now)));
    if (room <= 0) return { submissions: 0, deliveries: 0 };
    const ids = await oldestHeld(tx, orgId, room);
    if (!ids.length) return { submissions: 0, deliveries: 0 };
    const released = await tx
      .update(deliveries)
      .set({ status: 'pending', nextAttemptAt: dueNowUnlessDisabled(now), releasedAt: now })
      .where(and(eq(deliveries.orgId, orgId), eq(deliveries.status, 'held'), inArray(deliveries.submissionId, ids)))
      .returning({ id: deliveries.id });
    return { submissions: ids.length, deliveries: released.length };
  });
}

/** The over-quota submissions with held deliveries, oldest first (deliveries are planned when the submission arrives). */
async function oldestHeld(tx: Db, orgId: string, limit: number): Promise<string[]> {
  const first = min(deliveries.createdAt);
  const rows = await tx
    .select({ submissionId: deliveries.submissionId, first })
    .from(deliveries)
    .where(
      and(
        eq(deliveries.orgId, orgId),
        eq(deliveries.status, 'held'),
        isNotNull(deliveries.submissionId),
        // Held for a double opt-in confirmation instead: only the submitter releases those.
        sql`not exists (select 1 from ${submissions} s where s.id = ${deliveries.submissionId} and s.quarantine_reason = 'pending_confirmation')`,
      ),
    )
    .groupBy(deliveries.submissionId)
    .orderBy(asc(first), asc(deliveries.submissionId))
    .limit(limit);
  return rows.map((r) => r.submissionId as string);
}
