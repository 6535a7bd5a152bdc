import { and, eq, or } from 'drizzle-orm';
import type { Actor, Deps } from '../core/deps.js';
import { projects } from '../db/schema.js';
import { addDays, type ChartScope, countDays, type DayCounts, fillDays, utcDay } from '../domain/daily-counts.js';

export type { DayCounts } from '../domain/daily-counts.js';

/** Days a chart shows, today included. */
export const CHART_DAYS = 30;

export interface DailyChart {
  /** CHART_DAYS days, oldest first, today last; days without submissions are zeros */
  days: DayCounts[];
  totals: Omit<DayCounts, 'day'>;
}

/**
 * The last CHART_DAYS UTC days of the caller's organization: every form (or the forms of one
 * project, by id or slug; an unknown one counts nothing), or one form. Read from the per-day
 * rollup, plus the days it has not reached counted live (server/domain/daily-counts.ts).
 */
export async function dailyChart(
  deps: Deps,
  actor: Actor,
  of: { formId?: string; project?: string } = {},
): Promise<DailyChart> {
  const scope: ChartScope = { orgId: actor.orgId, formId: of.formId };
  if (of.project && !of.formId) scope.projectId = (await projectIdOf(deps, actor.orgId, of.project)) ?? '';
  const until = addDays(utcDay(deps.now()), 1);
  const from = addDays(until, -CHART_DAYS);
  const days = fillDays(await countDays(deps.database, scope, from, until), from, until);
  const totals = { received: 0, spam: 0, quarantined: 0, deliveries: 0, sent: 0 };
  for (const d of days) {
    totals.received += d.received;
    totals.spam += d.spam;
    totals.quarantined += d.quarantined;
    totals.deliveries += d.deliveries;
    totals.sent += d.sent;
  }
  return { days, totals };
}

async function projectIdOf(deps: Deps, orgId: string, project: string) {
  const [row] = await deps.database.db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.orgId, orgId), or(eq(projects.id, project), eq(projects.slug, project))));
  return row?.id;
}
