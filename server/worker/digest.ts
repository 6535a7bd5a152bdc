import { Cron } from 'croner';
import { and, asc, eq, gte, inArray, isNotNull, isNull, lt, ne, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Deps } from '../core/deps.js';
import { deliveries, destinations, forms, routes, submissions } from '../db/schema.js';
import { dueNowUnlessDisabledFor } from './disable.js';
import { policyOf } from './policy.js';

/** Closed periods looked at per route and check: the last three, so a late check still catches up. */
const PERIODS_BACK = 3;
/** Submissions listed in one digest; more are counted and flagged `truncated`. */
export const DIGEST_MAX_ITEMS = 500;

/** [from, until) periods of a cron schedule that closed before `now`, newest first. */
export function closedPeriods(cron: string, timezone: string, now: Date, count = PERIODS_BACK) {
  const job = new Cron(cron, { timezone, paused: true });
  const runs = job
    .previousRuns(count + 1, now)
    .filter((d) => d.getTime() <= now.getTime())
    .sort((a, b) => b.getTime() - a.getTime());
  const out: { from: Date; until: Date }[] = [];
  for (let i = 0; i + 1 < runs.length; i += 1) out.push({ from: runs[i + 1], until: runs[i] });
  return out;
}

/**
 * Plans the digest deliveries of every enabled digest route: one per (route, closed period) that
 * has submissions, unique on (route, period) so concurrent workers never double one. Empty periods
 * send nothing; periods that ended before the route existed are ignored. Returns how many it planned.
 */
export async function planDigests(deps: Deps): Promise<number> {
  const { db } = deps.database;
  const now = deps.now();
  const rows = await db
    .select({ route: routes, form: { id: forms.id, slug: forms.slug, name: forms.name }, type: destinations.type })
    .from(routes)
    .innerJoin(forms, eq(forms.id, routes.formId))
    .innerJoin(destinations, eq(destinations.id, routes.destinationId))
    .where(and(eq(routes.enabled, true), isNotNull(routes.formId), sql`${routes.mode}->>'type' = 'digest'`));
  let planned = 0;
  for (const { route, form, type } of rows) {
    const mode = route.mode as { cron: string; timezone?: string };
    let periods: { from: Date; until: Date }[];
    try {
      periods = closedPeriods(mode.cron, mode.timezone ?? 'UTC', now);
    } catch (err) {
      deps.log.warn({ route_id: route.id, err: String(err) }, 'digest route has an unusable cron');
      continue;
    }
    for (const period of periods) planned += await planPeriod(deps, { route, form, type }, period, now);
  }
  return planned;
}

type DigestRoute = {
  route: typeof routes.$inferSelect;
  form: { id: string; slug: string; name: string };
  type: string;
};

/** The submissions a digest period lists: the route's quality and window applied, at most one past the cap. */
async function periodItems(deps: Deps, route: DigestRoute['route'], formId: string, from: Date, until: Date) {
  const statuses = ['received'];
  if (route.quality.exclude_spam === false) statuses.push('spam');
  if (route.quality.exclude_quarantined === false) statuses.push('quarantined');
  const items = await deps.database.db
    .select()
    .from(submissions)
    .where(
      and(
        eq(submissions.formId, formId),
        gte(submissions.receivedAt, from),
        lt(submissions.receivedAt, until),
        inArray(submissions.status, statuses),
        // Over-quota submissions are paused, not summarised; only their instant routes hold them.
        or(isNull(submissions.quarantineReason), ne(submissions.quarantineReason, 'over_quota')),
      ),
    )
    .orderBy(asc(submissions.id))
    .limit(DIGEST_MAX_ITEMS + 1);
  return items.filter((s) => {
    const { from: wf, until: wu } = route.window;
    return !((wf && s.receivedAt < new Date(wf)) || (wu && s.receivedAt > new Date(wu)));
  });
}

/** Plans the digest delivery of one route's closed period, unless it has one or nothing to list: 1 or 0. */
async function planPeriod(
  deps: Deps,
  { route, form, type }: DigestRoute,
  period: { from: Date; until: Date },
  now: Date,
) {
  const { db } = deps.database;
  const mode = route.mode as { cron: string; timezone?: string };
  if (period.until.getTime() <= route.createdAt.getTime()) return 0;
  const from = new Date(Math.max(period.from.getTime(), route.createdAt.getTime()));
  const periodKey = `${period.from.toISOString()}/${period.until.toISOString()}`;
  const [exists] = await db
    .select({ id: deliveries.id })
    .from(deliveries)
    .where(and(eq(deliveries.routeId, route.id), eq(deliveries.periodKey, periodKey)))
    .limit(1);
  if (exists) return 0;
  const inWindow = await periodItems(deps, route, form.id, from, period.until);
  if (!inWindow.length) return 0;
  const id = newId('delivery');
  const listed = inWindow.slice(0, DIGEST_MAX_ITEMS);
  const payload = {
    id,
    type: 'digest.ready',
    schema_version: null,
    stream: null,
    form: { id: form.id, slug: form.slug },
    period: {
      from: period.from.toISOString(),
      until: period.until.toISOString(),
      cron: mode.cron,
      timezone: mode.timezone ?? 'UTC',
    },
    count: listed.length,
    truncated: inWindow.length > DIGEST_MAX_ITEMS,
    submissions: listed.map((s) => ({
      id: s.id,
      status: s.status,
      test: s.test,
      received_at: s.receivedAt.toISOString(),
      data: s.data,
      meta: s.meta,
    })),
    data: {},
    extras: {},
    meta: {},
  };
  const inserted = await db
    .insert(deliveries)
    .values({
      id,
      orgId: route.orgId,
      submissionId: null,
      routeId: route.id,
      destinationId: route.destinationId,
      formId: form.id,
      status: 'pending',
      maxAttempts: policyOf(type).maxAttempts,
      nextAttemptAt: dueNowUnlessDisabledFor(route.destinationId, now),
      eventType: 'digest.ready',
      periodKey,
      payload,
      createdAt: now,
    })
    .onConflictDoNothing({ target: [deliveries.routeId, deliveries.periodKey], where: sql`period_key is not null` })
    .returning({ id: deliveries.id });
  return inserted.length;
}
