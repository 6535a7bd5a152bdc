import { and, count, eq, gte, isNotNull, isNull, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, submissions } from '../db/schema.js';

/** The first instant of the calendar month (UTC) of `now`: monthly quotas reset there. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/**
 * Submissions counted against the monthly quota in the month of `now` (UTC), each at most once:
 * non-test submissions stored this month, except those stored `over_quota` (they were refused),
 * plus over-quota submissions whose held deliveries were released this month (a release spends
 * the allowance of the month it happens in). Test submissions never count. The same number is
 * checked at intake, spent by the release job and shown as `used.submissions_this_month`.
 */
export async function quotaUsed(db: Db, orgId: string, now: Date): Promise<number> {
  const since = monthStart(now);
  const admitted = db
    .select({ id: submissions.id })
    .from(submissions)
    .where(
      and(
        eq(submissions.orgId, orgId),
        eq(submissions.test, false),
        gte(submissions.receivedAt, since),
        or(isNull(submissions.quarantineReason), ne(submissions.quarantineReason, 'over_quota')),
      ),
    );
  const released = db
    .select({ id: sql<string>`${deliveries.submissionId}`.as('id') })
    .from(deliveries)
    .where(and(eq(deliveries.orgId, orgId), isNotNull(deliveries.submissionId), gte(deliveries.releasedAt, since)));
  // UNION (not UNION ALL): a submission admitted and released in the same month counts once.
  const counted = admitted.union(released).as('counted');
  const [row] = await db.select({ n: count() }).from(counted);
  return Number(row.n);
}
