import { type SQL, sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';

/**
 * Submissions per day by outcome, and their deliveries: what the dashboard's charts draw. Closed
 * days come from the rollup (daily_counts, written by the worker's job in
 * server/worker/daily-rollup.ts); the days the rollup has not reached yet (today, and yesterday
 * until the job runs, or every day on a database it has not caught up with) are counted live from
 * submissions by an index range scan bounded to those days. Days are UTC days.
 */

/** The rollup's name in rollup_state. */
export const DAILY_ROLLUP = 'daily';

export interface DayCounts {
  /** YYYY-MM-DD, a UTC day */
  day: string;
  received: number;
  spam: number;
  quarantined: number;
  /** deliveries of the day's submissions (digest deliveries belong to no submission and are left out) */
  deliveries: number;
  /** of those, how many are sent */
  sent: number;
}

/** Whose submissions a chart counts: an organization's, one project's, or one form's. */
export interface ChartScope {
  orgId: string;
  projectId?: string;
  formId?: string;
}

const DAY_MS = 86_400_000;

/** The UTC day of an instant, as YYYY-MM-DD. */
export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** The day `n` days after `day` (n may be negative). */
export const addDays = (day: string, n: number) => utcDay(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));

/** The first instant of a UTC day, as an ISO string the database reads as timestamptz. */
export const dayStart = (day: string) => `${day}T00:00:00.000Z`;

/**
 * The counted columns over submissions `s` joined with `d` (DELIVERIES_OF_S). Test submissions are
 * filtered out by the caller's WHERE, as the forms list counts them.
 */
export const COUNT_COLUMNS = sql`
  count(*) filter (where s.status = 'received')::int as received,
  count(*) filter (where s.status = 'spam')::int as spam,
  count(*) filter (where s.status = 'quarantined')::int as quarantined,
  coalesce(sum(d.total), 0)::int as deliveries,
  coalesce(sum(d.sent), 0)::int as sent`;

/** A submission's deliveries, counted through deliveries_submission_route (submission_id leads it). */
export const DELIVERIES_OF_S = sql`cross join lateral (
  select count(*) as total, count(*) filter (where dl.status = 'sent') as sent
  from deliveries dl where dl.submission_id = s.id) d`;

/** The forms a scope narrows to, as a condition on `col` (none for an organization). */
function formFilter(scope: ChartScope, col: SQL): SQL {
  if (scope.formId) return sql`and ${col} = ${scope.formId}`;
  if (scope.projectId)
    return sql`and ${col} in (select f.id from forms f where f.org_id = ${scope.orgId} and f.project_id = ${scope.projectId})`;
  return sql``;
}

/**
 * Counts of the days in [from, until) that have any, in one statement (one snapshot, so a day the
 * rollup writes meanwhile is counted once): days before the watermark from daily_counts, the rest
 * live from submissions_org_received. Days without submissions are absent (the caller fills zeros).
 */
export async function countDays(database: Database, scope: ChartScope, from: string, until: string) {
  const rows = await database.rows<DayCounts>(countDaysQuery(scope, from, until));
  return rows.map((r) => ({ ...r, day: String(r.day) }));
}

/** countDays' statement (the scale test EXPLAINs it). */
export function countDaysQuery(scope: ChartScope, from: string, until: string): SQL {
  const liveFrom = sql`(select greatest(coalesce(max(r.rolled_until), ${from}::date), ${from}::date)
    from rollup_state r where r.name = ${DAILY_ROLLUP})`;
  return sql`
    select to_char(c.day, 'YYYY-MM-DD') as day, sum(c.received)::int as received, sum(c.spam)::int as spam,
      sum(c.quarantined)::int as quarantined, sum(c.deliveries)::int as deliveries, sum(c.sent)::int as sent
    from daily_counts c
    where c.org_id = ${scope.orgId} and c.day >= ${from}::date and c.day < ${until}::date and c.day < ${liveFrom}
      ${formFilter(scope, sql`c.form_id`)}
    group by c.day
    union all
    select to_char((s.received_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, ${COUNT_COLUMNS}
    from submissions s ${DELIVERIES_OF_S}
    where s.org_id = ${scope.orgId} and not s.test
      and s.received_at >= (${liveFrom})::timestamp at time zone 'UTC'
      and s.received_at < ${dayStart(until)}::timestamptz
      ${formFilter(scope, sql`s.form_id`)}
    group by 1`;
}

/** Every day of [from, until) in order, with zeros where `rows` has none. */
export function fillDays(rows: DayCounts[], from: string, until: string): DayCounts[] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: DayCounts[] = [];
  for (let day = from; day < until; day = addDays(day, 1)) {
    const r = byDay.get(day);
    out.push({
      day,
      received: Number(r?.received ?? 0),
      spam: Number(r?.spam ?? 0),
      quarantined: Number(r?.quarantined ?? 0),
      deliveries: Number(r?.deliveries ?? 0),
      sent: Number(r?.sent ?? 0),
    });
  }
  return out;
}
