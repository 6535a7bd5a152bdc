import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limitsOf, type Org } from '../../server/domain/orgs.js';
import { claim } from '../../server/worker/claim.js';
import { planDigests } from '../../server/worker/digest.js';
import { DEFAULT_PLAN_LIMITS } from '../../shared/plans.js';
import type { TestEnv } from '../helpers/app.js';
import {
  deliveryRows,
  MID_MONTH,
  quotaApp,
  setPlan,
  statusesOf,
  submitMany,
  tenant,
  usedThisMonth,
} from '../helpers/quota.js';
import { seedSubmission } from '../helpers/seed.js';

let t: TestEnv;
const LIMIT = 2;
const DAY = 86_400_000;

beforeAll(async () => {
  ({ t } = await quotaApp(LIMIT));
});
afterAll(() => t.close());

describe('over the monthly quota', () => {
  it('plans held deliveries: the window rule applies, the quality rule does not; nothing is woken', async () => {
    const past = new Date(MID_MONTH.getTime() - DAY).toISOString();
    const a = await tenant(t, [
      {},
      { quality: { exclude_spam: true, exclude_quarantined: false } },
      { window: { from: null, until: past } },
      { enabled: false },
      { mode: { type: 'digest', cron: '0 9 * * *', timezone: 'UTC' } },
    ]);
    const ok = await submitMany(t, a.formId, LIMIT);
    expect(ok.map((s) => s.status)).toEqual(['received', 'received']);
    const wakes = t.wakes;
    const r = await t.request('POST', `/s/${a.formId}`, {
      json: { n: 'over' },
      headers: { accept: 'application/json' },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: false, status: 'quarantined' });
    const s = (await t.api('GET', `/v1/submissions/${r.json.submission_id}`, a.key)).json;
    expect(s.quarantine_reason).toBe('over_quota');
    const byRoute = Object.fromEntries(s.deliveries.map((d: { route_id: string }) => [d.route_id, d]));
    // Route 0 excludes quarantined and route 1 includes them: both are held, not skipped for quality.
    for (const id of a.routeIds.slice(0, 2)) {
      expect(byRoute[id]).toMatchObject({ status: 'held', skip_reason: null, next_attempt_at: null, attempts: 0 });
    }
    expect(byRoute[a.routeIds[2]]).toMatchObject({ status: 'skipped', skip_reason: 'window' });
    expect(byRoute[a.routeIds[3]]).toBeUndefined(); // disabled
    expect(byRoute[a.routeIds[4]]).toBeUndefined(); // digest
    expect(t.wakes).toBe(wakes);
    const listed = await t.api('GET', `/v1/deliveries?status=held&submission_id=${s.id}`, a.key);
    expect(listed.json.data).toHaveLength(2);
    // The submission.quarantined event names the planned deliveries.
    const [ev] = await t.deps.database.rows<{ data: { deliveries: string[] } }>(
      sql`select data from events where type = 'submission.quarantined' and subject->>'submission_id' = ${s.id}`,
    );
    expect(ev.data.deliveries.sort()).toEqual(s.deliveries.map((d: { id: string }) => d.id).sort());
  });

  it('leaves over-quota submissions out of digests, even where the route takes quarantined ones', async () => {
    const { t: d, clock } = await quotaApp(1);
    try {
      const a = await tenant(d, [
        {
          mode: { type: 'digest', cron: '0 9 * * *', timezone: 'UTC' },
          quality: { exclude_spam: true, exclude_quarantined: false },
        },
      ]);
      clock.now = new Date(MID_MONTH.getTime() - DAY); // inside the period that closes on MID_MONTH's morning
      const sent = await submitMany(d, a.formId, 3);
      expect(sent.map((s) => s.status)).toEqual(['received', 'quarantined', 'quarantined']);
      clock.now = MID_MONTH;
      expect(await planDigests(d.deps)).toBe(1);
      const [digest] = await deliveryRows(d, a.orgId);
      const listed = (digest.payload.submissions as { id: string }[]).map((s) => s.id);
      expect(listed).toEqual([sent[0].id]);
    } finally {
      await d.close();
    }
  });

  it('a worker never claims held rows, and retry answers 409 saying why', async () => {
    const a = await tenant(t, [{}]);
    await submitMany(t, a.formId, LIMIT + 2);
    const rows = await deliveryRows(t, a.orgId);
    const held = rows.filter((d) => d.status === 'held');
    expect(held).toHaveLength(2);
    const claimed = await claim(t.deps.database, 'delivery', {
      now: new Date(MID_MONTH.getTime() + 365 * DAY),
      limit: 1000,
      perTarget: 1000,
      busy: [],
      leaseMs: 60_000,
    });
    const claimedIds = new Set(claimed.map((c) => c.id));
    for (const d of held) expect(claimedIds.has(d.id)).toBe(false);
    for (const d of rows.filter((d) => d.status === 'pending')) expect(claimedIds.has(d.id)).toBe(true);
    for (const d of held) expect(await statusesOf(t, a.orgId, d.submissionId as string)).toEqual(['held']);
    const retry = await t.api('POST', `/v1/deliveries/${held[0].id}/retry`, a.key);
    expect(retry.status).toBe(409);
    expect(retry.json.error.details).toEqual({ status: 'held' });
    expect(retry.json.error.hint).toMatch(/quota/);
  });

  it('counts usage once per admitted submission: test and over-quota ones do not count', async () => {
    const a = await tenant(t, [{}]);
    expect(await usedThisMonth(t, a.key)).toBe(0);
    await submitMany(t, a.formId, 2, { _test: true });
    expect(await usedThisMonth(t, a.key)).toBe(0);
    const real = await submitMany(t, a.formId, LIMIT + 3);
    expect(real.map((s) => s.status)).toEqual(['received', 'received', 'quarantined', 'quarantined', 'quarantined']);
    expect(await usedThisMonth(t, a.key)).toBe(LIMIT);
    // Test submissions still go through over the quota, and are routed.
    const test = await t.request('POST', `/s/${a.formId}`, { json: { _test: true } });
    expect(test.json).toMatchObject({ status: 'received', deliveries: [expect.any(String)] });
    expect(await statusesOf(t, a.orgId, test.json.submission_id)).toEqual(['pending']);
    // Last month's submissions do not count this month.
    const b = await tenant(t, [{}]);
    for (let i = 0; i < LIMIT + 1; i += 1) {
      await seedSubmission(t, { orgId: b.orgId, formId: b.formId, receivedAt: new Date(Date.UTC(2031, 1, 27)) });
    }
    expect(await usedThisMonth(t, b.key)).toBe(0);
    expect((await submitMany(t, b.formId, 1))[0].status).toBe('received');
  });

  it('applies PLAN_LIMITS per plan and per organization', async () => {
    const a = await tenant(t, [{}]);
    const me = (await t.api('GET', '/v1/me', a.key)).json;
    expect(me.organization.plan).toBe('free');
    expect(me.limits).toMatchObject({ ...DEFAULT_PLAN_LIMITS.free, submissions_per_month: LIMIT });
    // Another organization on a plan the override does not touch keeps its built-in limit.
    const b = await tenant(t, [{}]);
    await setPlan(t, b.orgId, 'pro');
    expect((await t.api('GET', '/v1/me', b.key)).json.limits.submissions_per_month).toBe(
      DEFAULT_PLAN_LIMITS.pro.submissions_per_month,
    );
    expect((await submitMany(t, b.formId, LIMIT + 2)).every((s) => s.status === 'received')).toBe(true);
    // a is over its own quota; b's traffic never counted for a.
    expect((await submitMany(t, a.formId, LIMIT + 1)).map((s) => s.status)).toEqual([
      'received',
      'received',
      'quarantined',
    ]);
    expect(await usedThisMonth(t, a.key)).toBe(LIMIT);
    expect(await usedThisMonth(t, b.key)).toBe(LIMIT + 2);
  });

  it('falls back to the free plan once plan_expires_at passes', async () => {
    const a = await tenant(t, [{}]);
    const later = new Date(MID_MONTH.getTime() + 10 * DAY);
    await setPlan(t, a.orgId, 'pro', later);
    let me = (await t.api('GET', '/v1/me', a.key)).json;
    expect(me.organization).toMatchObject({ plan: 'pro', plan_expires_at: later.toISOString() });
    expect(me.limits.submissions_per_month).toBe(DEFAULT_PLAN_LIMITS.pro.submissions_per_month);
    expect((await submitMany(t, a.formId, LIMIT + 1)).every((s) => s.status === 'received')).toBe(true);

    // The same row, read at two instants: limits follow the clock, not a stored flag.
    const [org] = await t.deps.database.rows<Record<string, unknown>>(
      sql`select plan, plan_expires_at from organizations where id = ${a.orgId}`,
    );
    const row = { plan: org.plan, planExpiresAt: new Date(org.plan_expires_at as string) } as Org;
    expect(limitsOf(t.deps.config, row, MID_MONTH).submissions_per_month).toBe(
      DEFAULT_PLAN_LIMITS.pro.submissions_per_month,
    );
    expect(limitsOf(t.deps.config, row, later).submissions_per_month).toBe(LIMIT);

    await setPlan(t, a.orgId, 'pro', new Date(MID_MONTH.getTime() - 1000));
    me = (await t.api('GET', '/v1/me', a.key)).json;
    expect(me.organization.plan).toBe('free');
    expect(me.limits).toMatchObject({ ...DEFAULT_PLAN_LIMITS.free, submissions_per_month: LIMIT });
    const [next] = await submitMany(t, a.formId, 1);
    expect(next.status).toBe('quarantined');
    expect(await statusesOf(t, a.orgId, next.id)).toEqual(['held']);
  });
});
