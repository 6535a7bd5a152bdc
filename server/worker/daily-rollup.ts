import { eq, type SQL, sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import { rollupState } from '../db/schema.js';
import { addDays, COUNT_COLUMNS, DAILY_ROLLUP, DELIVERIES_OF_S, dayStart, utcDay } from '../domain/daily-counts.js';

/**
 * Closed days rolled again on every run, so what changes after a day ends (a delivery sent on a
 * retry, a submission marked as spam, retention) shows in the chart for that long; older days keep
 * the counts they were rolled with.
 */
export const REROLL_DAYS = 3;
/** Days one run rolls at most (one statement each); a rollup that is behind continues on the next run. */
export const ROLLUP_DAYS_PER_RUN = 7;
/** How far back the first run on an existing database starts: the chart needs 30 days; a margin. */
export const BACKFILL_DAYS = 90;

export interface RollupResult {
  /** the days rolled by this run, oldest first */
  days: string[];
  /** every day before this one is rolled */
  rolled_until: string | null;
}

/**
 * Housekeeping: writes the per-day counts of closed UTC days into daily_counts (the charts of the
 * Forms page and each form's page). Intake writes nothing for it: a per-day counter would be one hot
 * row per form that concurrent posts queue on. Runs every ROLLUP_INTERVAL_S, and on every
 * housekeeping run while days are waiting (a new day, or the backfill of a database it has not
 * caught up with). Across a fleet one process wins each run (a conditional update of rollup_state)
 * and each day is rolled holding the state row (FOR UPDATE SKIP LOCKED), so two never roll at once.
 */
export async function rollDaily(deps: Deps, opts: { force?: boolean } = {}): Promise<RollupResult> {
  const now = deps.now();
  const today = utcDay(now);
  await ensureState(deps, today);
  const since = new Date(now.getTime() - deps.config.rollupIntervalS * 1000).toISOString();
  const [won] = await deps.database.rows<{ rolled_until: string }>(sql`
    update rollup_state set ran_at = ${now.toISOString()}::timestamptz
    where name = ${DAILY_ROLLUP}
      and (${opts.force === true} or ran_at is null or ran_at <= ${since}::timestamptz or rolled_until < ${today}::date)
    returning to_char(rolled_until, 'YYYY-MM-DD') as rolled_until`);
  if (!won) return { days: [], rolled_until: null };
  const days = daysToRoll(String(won.rolled_until), today);
  const rolled: string[] = [];
  for (const day of days) {
    if (!(await rollDay(deps, day))) break;
    rolled.push(day);
  }
  if (rolled.length) deps.log.debug({ days: rolled }, 'daily counts rolled');
  const until = rolled.length ? addDays(rolled[rolled.length - 1], 1) : String(won.rolled_until);
  return { days: rolled, rolled_until: until > String(won.rolled_until) ? until : String(won.rolled_until) };
}

/** The closed days a run rolls: the ones past the watermark, else the last REROLL_DAYS; oldest first, capped. */
export function daysToRoll(rolledUntil: string, today: string): string[] {
  const reroll = addDays(today, -REROLL_DAYS);
  const out: string[] = [];
  for (let d = rolledUntil < reroll ? rolledUntil : reroll; d < today; d = addDays(d, 1)) {
    out.push(d);
    if (out.length === ROLLUP_DAYS_PER_RUN) break;
  }
  return out;
}

/**
 * The state row, made on the first run: its watermark is the day of the oldest submission, or
 * BACKFILL_DAYS ago when that is older (the chart never shows those), or today on an empty database.
 * The oldest day is found with one index probe per organization (submissions_org_received).
 */
async function ensureState(deps: Deps, today: string) {
  const { db } = deps.database;
  const has = await db.select({ n: rollupState.name }).from(rollupState).where(eq(rollupState.name, DAILY_ROLLUP));
  if (has.length) return;
  const [oldest] = await deps.database.rows<{ at: string | null }>(sql`
    select min(m.at) as at from organizations o
    cross join lateral (select min(s.received_at) as at from submissions s where s.org_id = o.id) m`);
  const first = oldest?.at ? utcDay(new Date(oldest.at)) : today;
  const floor = addDays(today, -BACKFILL_DAYS);
  await db
    .insert(rollupState)
    .values({ name: DAILY_ROLLUP, rolledUntil: first < floor ? floor : first < today ? first : today })
    .onConflictDoNothing();
}

/**
 * Rolls one day in one transaction: its rows are replaced by a fresh count (a form whose day went
 * to nothing loses its row) and the watermark moves past it. Answers false when another process
 * holds the state row (it is rolling): this run stops and leaves the rest to it.
 */
async function rollDay(deps: Deps, day: string): Promise<boolean> {
  return deps.database.db.transaction(async (tx) => {
    const held = await tx
      .select({ name: rollupState.name })
      .from(rollupState)
      .where(eq(rollupState.name, DAILY_ROLLUP))
      .for('update', { skipLocked: true });
    if (!held.length) return false;
    await tx.execute(sql`delete from daily_counts where day = ${day}::date`);
    await tx.execute(rollDayQuery(day));
    await tx.execute(sql`
      update rollup_state set rolled_until = greatest(rolled_until, ${addDays(day, 1)}::date)
      where name = ${DAILY_ROLLUP}`);
    return true;
  });
}

/**
 * A day's rows of daily_counts: one index range scan per organization (submissions_org_received)
 * bounded to the day, and each submission's deliveries by deliveries_submission_route. `offset 0`
 * keeps the subquery from being flattened into a join, where the planner may scan all of
 * submissions for the day's rows (it did with a few large organizations among many small ones).
 */
export function rollDayQuery(day: string): SQL {
  return sql`
    insert into daily_counts (form_id, day, org_id, received, spam, quarantined, deliveries, sent)
    select s.form_id, ${day}::date, s.org_id, ${COUNT_COLUMNS}
    from organizations o
    cross join lateral (
      select s.id, s.form_id, s.org_id, s.status from submissions s
      where s.org_id = o.id and not s.test
        and s.received_at >= ${dayStart(day)}::timestamptz and s.received_at < ${dayStart(addDays(day, 1))}::timestamptz
      offset 0
    ) s
    ${DELIVERIES_OF_S}
    where exists (select 1 from forms f where f.id = s.form_id)
    group by s.form_id, s.org_id`;
}
