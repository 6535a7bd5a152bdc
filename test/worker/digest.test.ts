import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries, routes } from '../../server/db/schema.js';
import { closedPeriods, planDigests } from '../../server/worker/digest.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver, until } from '../helpers/receiver.js';
import { orgIdOf, seedSubmission } from '../helpers/seed.js';

describe('closedPeriods', () => {
  it('lists the closed periods of a schedule, newest first', () => {
    const p = closedPeriods('* * * * *', 'UTC', new Date('2026-03-30T12:00:30Z'));
    expect(p.map((x) => [x.from.toISOString(), x.until.toISOString()])).toEqual([
      ['2026-03-30T11:59:00.000Z', '2026-03-30T12:00:00.000Z'],
      ['2026-03-30T11:58:00.000Z', '2026-03-30T11:59:00.000Z'],
      ['2026-03-30T11:57:00.000Z', '2026-03-30T11:58:00.000Z'],
    ]);
  });

  it('follows the route timezone across a DST gap (pinned: a nonexistent 02:30 fires at 03:00 local)', () => {
    const p = closedPeriods('30 2 * * *', 'Europe/Berlin', new Date('2026-03-30T12:00:00Z'), 2);
    expect(p.map((x) => [x.from.toISOString(), x.until.toISOString()])).toEqual([
      ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'],
      ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z'],
    ]);
  });
});

describe('digest routes', () => {
  let t: TestEnv;
  let key: string;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestApp();
    key = (await t.onboard()).key;
    orgId = await orgIdOf(t, key);
  });
  afterAll(() => t.close());

  async function digestRoute(url: string) {
    const form = await t.api('POST', '/v1/forms', key, { json: { name: `Digest ${Math.random()}` } });
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'd', config: { url } },
    });
    const route = await t.api('POST', '/v1/routes', key, {
      json: {
        form_id: form.json.id,
        destination_id: dest.json.id,
        mode: { type: 'digest', cron: '* * * * *', timezone: 'UTC' },
      },
    });
    expect(route.status).toBe(201);
    // The route has existed for ten minutes, so the last closed periods count.
    await t.deps.database.db
      .update(routes)
      .set({ createdAt: new Date(Date.now() - 600_000) })
      .where(eq(routes.id, route.json.id));
    return { formId: form.json.id as string, routeId: route.json.id as string };
  }

  it('plans nothing at intake, then one delivery per closed period with its submissions, once', async () => {
    const hook = await startReceiver();
    try {
      const { formId, routeId } = await digestRoute(hook.url);
      const r = await t.request('POST', `/s/${formId}`, {
        json: { now: 'live' },
        headers: { accept: 'application/json' },
      });
      expect(r.json.deliveries ?? []).toEqual([]);
      const minuteAgo = new Date(Date.now() - 60_000);
      const lastPeriodStart = new Date(Math.floor(minuteAgo.getTime() / 60_000) * 60_000);
      const a = await seedSubmission(t, {
        orgId,
        formId,
        data: { marker: 'a' },
        receivedAt: new Date(lastPeriodStart.getTime() + 1000),
      });
      const b = await seedSubmission(t, {
        orgId,
        formId,
        data: { marker: 'b' },
        receivedAt: new Date(lastPeriodStart.getTime() + 2000),
      });
      await seedSubmission(t, {
        orgId,
        formId,
        status: 'spam',
        receivedAt: new Date(lastPeriodStart.getTime() + 3000),
      });
      expect(await planDigests(t.deps)).toBeGreaterThanOrEqual(1);
      await planDigests(t.deps); // a second check (or a second worker) plans that period again: nothing new
      const rows = await t.deps.database.db.select().from(deliveries).where(eq(deliveries.routeId, routeId));
      const withAB = rows.filter((d) => JSON.stringify(d.payload).includes(a.id));
      expect(withAB).toHaveLength(1);
      const digest = withAB[0];
      expect(digest).toMatchObject({ status: 'pending', eventType: 'digest.ready', submissionId: null });
      const items = (digest.payload as any).submissions.map((s: any) => s.id);
      expect(items).toEqual([a.id, b.id]);
      expect(digest.payload).toMatchObject({ type: 'digest.ready', count: 2, form: { id: formId } });
      await t.startWorker();
      await hook.waitFor((reqs) => reqs.some((q) => q.headers['service-delivery'] === digest.id));
      const req = hook.requests.find((q) => q.headers['service-delivery'] === digest.id);
      expect(req?.headers['service-event']).toBe('digest.ready');
      expect(req?.json).toEqual(digest.payload);
      await until('digest sent', async () => {
        const [d] = await t.deps.database.rows<{ status: string }>(
          sql`select status from deliveries where id = ${digest.id}`,
        );
        return d.status === 'sent';
      });
    } finally {
      await hook.close();
    }
  });

  it('sends nothing for an empty period', async () => {
    const { routeId } = await digestRoute('http://127.0.0.1:9/never');
    await planDigests(t.deps);
    const rows = await t.deps.database.db.select().from(deliveries).where(eq(deliveries.routeId, routeId));
    expect(rows).toEqual([]);
  });
});
