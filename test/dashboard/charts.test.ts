import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, countDaysQuery, utcDay } from '../../server/domain/daily-counts.js';
import { CHART_DAYS } from '../../server/services/charts.js';
import {
  daysToRoll,
  REROLL_DAYS,
  ROLLUP_DAYS_PER_RUN,
  rollDaily,
  rollDayQuery,
} from '../../server/worker/daily-rollup.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let other: Awaited<ReturnType<typeof dashboardSession>>;

/** Noon UTC of the real day: the clock of the service for the whole file. */
const TODAY = utcDay(new Date());
const NOW = new Date(`${TODAY}T12:00:00Z`);

beforeAll(async () => {
  t = await startTestApp();
  t.deps.now = () => NOW;
  s = await dashboardSession(t);
  other = await dashboardSession(t);
});
afterAll(() => t.close());

const db = () => t.deps.database;

async function createForm(key: string, name: string) {
  const r = await t.api('POST', '/v1/forms', key, { json: { name } });
  expect(r.status).toBe(201);
  const id = r.json.id as string;
  const [row] = await db().rows<{ org_id: string }>(sql`select org_id from forms where id = ${id}`);
  return { id, orgId: row.org_id };
}

/**
 * `n` submissions of `form` with `status` on `day` (spread over its hours), as intake stores them,
 * and for the first `deliveries` of them one delivery each, the first `sent` of those sent.
 */
async function seed(
  form: { id: string; orgId: string },
  day: string,
  status: string,
  n: number,
  opts: { deliveries?: number; sent?: number; test?: boolean } = {},
) {
  const tag = `${form.id}-${day}-${status}-${crypto.randomUUID().slice(0, 6)}`;
  await db().rows(sql`
    insert into submissions (id, org_id, form_id, status, test, data, spam, meta, client_ip, received_at)
    select 'sb_' || ${tag} || '-' || g, ${form.orgId}, ${form.id}, ${status}, ${opts.test === true}, '{}'::jsonb,
      '{"score":0,"reasons":[]}'::jsonb, '{}'::jsonb, '127.0.0.1',
      ${`${day}T00:00:00Z`}::timestamptz + make_interval(secs => (g * 86399.0 / ${n + 1}))
    from generate_series(1, ${n}::int) g`);
  await db().rows(sql`
    insert into deliveries (id, org_id, submission_id, route_id, destination_id, form_id, status, max_attempts, payload)
    select 'dl_' || ${tag} || '-' || g, ${form.orgId}, 'sb_' || ${tag} || '-' || g, 'rt_chart', 'ds_chart', ${form.id},
      case when g <= ${opts.sent ?? 0} then 'sent' else 'failed' end, 8, '{}'::jsonb
    from generate_series(1, ${opts.deliveries ?? 0}::int) g`);
}

/** The chart table's rows of a page: day → [received, quarantined, spam, deliveries, sent]. */
function tableOf(html: string) {
  const out = new Map<string, number[]>();
  const re =
    /<tr><th scope="row">(\d{4}-\d\d-\d\d)<\/th><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+) \(/g;
  for (const m of html.matchAll(re)) out.set(m[1], m.slice(2, 7).map(Number));
  return out;
}

/** Runs the rollup until it has nothing behind (each run rolls at most ROLLUP_DAYS_PER_RUN days). */
async function rollAll() {
  for (let i = 0; i < 100; i++) {
    const r = await rollDaily(t.deps, { force: true });
    if (r.rolled_until === TODAY && r.days.length < ROLLUP_DAYS_PER_RUN) return r;
  }
  throw new Error('the rollup did not catch up');
}

describe('the 30-day chart', () => {
  let a: { id: string; orgId: string };
  let b: { id: string; orgId: string };
  let theirs: { id: string; orgId: string };

  beforeAll(async () => {
    a = await createForm(s.key, 'Contact <b>"A"</b> & co');
    b = await createForm(s.key, 'Second');
    theirs = await createForm(other.key, 'Theirs');
    await seed(a, TODAY, 'received', 3, { deliveries: 2, sent: 1 });
    await seed(a, addDays(TODAY, -1), 'received', 5, { deliveries: 4, sent: 4 });
    await seed(a, addDays(TODAY, -1), 'spam', 2);
    await seed(a, addDays(TODAY, -2), 'quarantined', 4);
    await seed(a, addDays(TODAY, -2), 'received', 1, { test: true });
    await seed(b, addDays(TODAY, -10), 'received', 7, { deliveries: 7, sent: 6 });
    await seed(a, addDays(TODAY, -(CHART_DAYS + 2)), 'received', 9);
    await seed(theirs, addDays(TODAY, -1), 'received', 11, { deliveries: 11, sent: 11 });
  });

  const expectA = (rows: Map<string, number[]>) => {
    expect(rows.size).toBe(CHART_DAYS);
    expect(rows.get(TODAY)).toEqual([3, 0, 0, 2, 1]);
    expect(rows.get(addDays(TODAY, -1))).toEqual([5, 0, 2, 4, 4]);
    // the test submission is not counted
    expect(rows.get(addDays(TODAY, -2))).toEqual([0, 4, 0, 0, 0]);
    // days with nothing are there, as zeros; the day before the window is not shown
    expect(rows.get(addDays(TODAY, -3))).toEqual([0, 0, 0, 0, 0]);
    expect(rows.get(addDays(TODAY, -(CHART_DAYS - 1)))).toEqual([0, 0, 0, 0, 0]);
    expect(rows.has(addDays(TODAY, -CHART_DAYS))).toBe(false);
  };

  it('counts live before the rollup has run, and the same from the rollup after', async () => {
    const before = await s.get(`/app/forms/${a.id}`);
    expect(before.status).toBe(200);
    expectA(tableOf(before.html));

    const r = await rollAll();
    expect(r.rolled_until).toBe(TODAY);
    const rolled = await db().rows<{ day: string; received: number }>(
      sql`select to_char(day, 'YYYY-MM-DD') as day, received from daily_counts where form_id = ${a.id} order by day`,
    );
    // the first run started at the oldest submission's day; today is never rolled
    expect(rolled.map((x) => x.day)).toEqual([
      addDays(TODAY, -(CHART_DAYS + 2)),
      addDays(TODAY, -2),
      addDays(TODAY, -1),
    ]);
    const after = await s.get(`/app/forms/${a.id}`);
    expectA(tableOf(after.html));
  });

  it('sums every form of the organization on the Forms page, and nothing of another organization', async () => {
    const mine = tableOf((await s.get('/app/forms')).html);
    expect(mine.get(addDays(TODAY, -1))).toEqual([5, 0, 2, 4, 4]);
    expect(mine.get(addDays(TODAY, -10))).toEqual([7, 0, 0, 7, 6]);
    const page = await other.get('/app/forms');
    const theirsRows = tableOf(page.html);
    expect(theirsRows.get(addDays(TODAY, -1))).toEqual([11, 0, 0, 11, 11]);
    expect(theirsRows.get(addDays(TODAY, -10))).toEqual([0, 0, 0, 0, 0]);
    expect(page.html).not.toContain('Contact');
    expect((await other.get(`/app/forms/${a.id}`)).status).toBe(404);
  });

  it('narrows the Forms page chart to the project the filter names', async () => {
    const [p] = await db().rows<{ slug: string }>(
      sql`select p.slug from projects p join forms f on f.project_id = p.id where f.id = ${a.id}`,
    );
    const rows = tableOf((await s.get(`/app/forms?project=${p.slug}`)).html);
    expect(rows.get(addDays(TODAY, -1))).toEqual([5, 0, 2, 4, 4]);
    const none = tableOf((await s.get('/app/forms?project=no-such-project')).html);
    expect([...none.values()].every((v) => v.every((n) => n === 0))).toBe(true);
  });

  it('draws an accessible SVG with the numbers in a table, and escapes the form name', async () => {
    const { html } = await s.get(`/app/forms/${a.id}`);
    const svg = html.slice(html.indexOf('<svg'), html.indexOf('</svg>') + 6);
    expect(svg).toMatch(/role="img"/);
    expect(svg).toContain('aria-labelledby="chart-title chart-desc"');
    expect(svg).toContain(
      '<title id="chart-title">Submissions per day, last 30 days: Contact &lt;b&gt;&quot;A&quot;&lt;/b&gt; &amp; co</title>',
    );
    expect(svg).toMatch(/<desc id="chart-desc">14 submissions: 8 received, 4 quarantined, 2 spam; 83% of 6/);
    expect(svg).not.toContain('<b>');
    expect(svg).not.toMatch(/\sstyle=/);
    // one bar group per day; a stacked rect per outcome that day had; the sent line through days with deliveries
    expect(svg.match(/<g><title>/g)).toHaveLength(CHART_DAYS);
    expect(svg.match(/class="chart-received"/g)).toHaveLength(2);
    expect(svg.match(/class="chart-spam"/g)).toHaveLength(1);
    expect(svg.match(/class="chart-quarantined"/g)).toHaveLength(1);
    expect(svg.match(/<circle /g)).toHaveLength(2);
    expect(html).toMatch(
      /<details><summary>Numbers per day<\/summary><div class="table-wrap"><table class="chart-table">/,
    );
    const css = await (await t.app.request('/app/assets/app.css')).text();
    expect(css).toContain('.chart-svg{');
  });

  it('re-rolls the last days on each run: a later mark as spam shows; older days keep their counts', async () => {
    const day = addDays(TODAY, -1);
    await db().rows(sql`update submissions set status = 'spam'
      where form_id = ${a.id} and status = 'received' and received_at < ${`${TODAY}T00:00:00Z`}::timestamptz
        and received_at >= ${`${day}T00:00:00Z`}::timestamptz`);
    await db().rows(sql`update submissions set status = 'spam' where form_id = ${b.id}`);
    // within the interval and caught up: the run does nothing
    expect((await rollDaily(t.deps)).days).toEqual([]);
    const r = await rollDaily(t.deps, { force: true });
    expect(r.days).toEqual(daysToRoll(TODAY, TODAY));
    expect(r.days).toHaveLength(REROLL_DAYS);
    const mine = tableOf((await s.get('/app/forms')).html);
    expect(mine.get(day)).toEqual([0, 0, 7, 4, 4]);
    // ten days ago is past the re-roll window: as rolled
    expect(mine.get(addDays(TODAY, -10))).toEqual([7, 0, 0, 7, 6]);
  });

  it('lets one of two concurrent runs roll a day at a time, without errors or double counts', async () => {
    const runs = await Promise.all([rollDaily(t.deps, { force: true }), rollDaily(t.deps, { force: true })]);
    expect(runs.every((r) => r.rolled_until === TODAY)).toBe(true);
    const [n] = await db().rows<{ n: number }>(
      sql`select count(*)::int as n from daily_counts where form_id = ${a.id} and day = ${addDays(TODAY, -1)}::date`,
    );
    expect(n.n).toBe(1);
  });
});

/** An index range scan of one organization's submissions by time (a plain, index-only or bitmap one). */
const ORG_RANGE_SCAN = /(Index|Index Only|Bitmap Index) Scan (using|on) submissions_org_received/;

describe('the chart at scale', () => {
  const ROWS = 60_000;
  const DAYS = 40;

  it('rolls 60,000 submissions over 40 days in bounded runs to the numbers of a direct count, and the page query scans no submissions but today’s', async () => {
    const me = await dashboardSession(t);
    const f = await createForm(me.key, 'Busy');
    // Row g: one every DAYS*86400/ROWS seconds back from now; 1 in 25 spam, 1 in 40 quarantined, 1 in 100 test.
    await db().rows(sql`
        insert into submissions (id, org_id, form_id, status, test, data, spam, meta, client_ip, received_at)
        select 'sb_scale' || g, ${f.orgId}, ${f.id},
          case when g % 25 = 0 then 'spam' when g % 40 = 1 then 'quarantined' else 'received' end,
          g % 100 = 7, '{}'::jsonb, '{"score":0,"reasons":[]}'::jsonb, '{}'::jsonb, '127.0.0.1',
          ${NOW.toISOString()}::timestamptz - make_interval(secs => g * ${(DAYS * 86_400) / ROWS}::float8)
        from generate_series(1, ${ROWS}::int) g`);
    await db().rows(sql`
        insert into deliveries (id, org_id, submission_id, route_id, destination_id, form_id, status, max_attempts, payload)
        select 'dl_scale' || g, ${f.orgId}, 'sb_scale' || g, 'rt_scale', 'ds_scale', ${f.id},
          case when g % 9 = 0 then 'dead' else 'sent' end, 8, '{}'::jsonb
        from generate_series(1, ${ROWS}::int, 3) g`);
    for (const table of ['submissions', 'deliveries']) await db().rows(sql.raw(`analyze ${table}`));

    // As on a database the rollup has never seen: the state is made anew and backfills.
    await db().rows(sql`delete from rollup_state`);
    await db().rows(sql`delete from daily_counts`);
    let runs = 0;
    for (;;) {
      runs += 1;
      const r = await rollDaily(t.deps, { force: true });
      expect(r.days.length).toBeLessThanOrEqual(ROLLUP_DAYS_PER_RUN);
      if (r.rolled_until === TODAY && r.days.length < ROLLUP_DAYS_PER_RUN) break;
      expect(runs).toBeLessThan(20);
    }
    expect(runs).toBeGreaterThanOrEqual(Math.ceil(DAYS / ROLLUP_DAYS_PER_RUN));

    const direct = await db().rows<Record<string, number | string>>(sql`
        select to_char((s.received_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day,
          count(*) filter (where s.status = 'received')::int as received,
          count(*) filter (where s.status = 'spam')::int as spam,
          count(*) filter (where s.status = 'quarantined')::int as quarantined,
          count(d.id)::int as deliveries, count(d.id) filter (where d.status = 'sent')::int as sent
        from submissions s left join deliveries d on d.submission_id = s.id
        where s.form_id = ${f.id} and not s.test and s.received_at < ${`${TODAY}T00:00:00Z`}::timestamptz
        group by 1 order by 1`);
    const rolled = await db().rows<Record<string, number | string>>(sql`
        select to_char(day, 'YYYY-MM-DD') as day, received, spam, quarantined, deliveries, sent
        from daily_counts where form_id = ${f.id} order by day`);
    expect(direct.length).toBe(DAYS);
    expect(rolled).toEqual(direct);

    const page = tableOf((await me.get(`/app/forms/${f.id}`)).html);
    for (const d of direct.slice(-(CHART_DAYS - 1)))
      expect(page.get(String(d.day))).toEqual([d.received, d.quarantined, d.spam, d.deliveries, d.sent]);

    // The rollup's statement reads one day by index, per organization.
    const rollPlan = await db().rows<{ 'QUERY PLAN': string }>(sql`explain ${rollDayQuery(addDays(TODAY, -3))}`);
    const rollText = rollPlan.map((p) => p['QUERY PLAN']).join('\n');
    expect(rollText).toMatch(ORG_RANGE_SCAN);
    expect(rollText).not.toMatch(/Seq Scan on (submissions|deliveries)/);

    // The page's statement: closed days from daily_counts, today by an index range scan; never a
    // sequential scan of submissions.
    const from = addDays(TODAY, 1 - CHART_DAYS);
    for (const scope of [{ orgId: f.orgId }, { orgId: f.orgId, formId: f.id }]) {
      const plan = await db().rows<{ 'QUERY PLAN': string }>(
        sql`explain ${countDaysQuery(scope, from, addDays(TODAY, 1))}`,
      );
      const text = plan.map((p) => p['QUERY PLAN']).join('\n');
      expect(text).toContain('daily_counts');
      expect(text).toMatch(ORG_RANGE_SCAN);
      expect(text).not.toMatch(/Seq Scan on submissions/);
    }
  }, 240_000);
});
