import crypto from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries, destinations, events, systemWebhookDeliveries } from '../../server/db/schema.js';
import { REPLAY_BATCH } from '../../server/services/replay.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { orgIdOf, seedDelivery } from '../helpers/seed.js';
import { tenants } from '../helpers/tenant.js';

let t: TestEnv;
let key: string;
let readKey: string;
let otherKey: string;
let orgId: string;

beforeAll(async () => {
  t = await startTestApp(); // no worker: the test reads the rows the replay queued
  ({ key, orgId, readKey, otherKey } = await tenants(t));
});

afterAll(async () => {
  await t.close();
});

/** A form routed to a webhook destination, through the API. */
async function routed(k = key) {
  const form = await t.api('POST', '/v1/forms', k, { json: { name: `F ${crypto.randomUUID().slice(0, 8)}` } });
  const dest = await t.api('POST', '/v1/destinations', k, {
    json: { type: 'webhook', name: 'hook', config: { url: 'https://hooks.example.com/in' } },
  });
  const route = await t.api('POST', '/v1/routes', k, { json: { form_id: form.json.id, destination_id: dest.json.id } });
  expect(route.status).toBe(201);
  return { formId: form.json.id as string, destId: dest.json.id as string, routeId: route.json.id as string };
}

type Status = 'dead' | 'failed' | 'sent' | 'pending';
async function seed(r: Awaited<ReturnType<typeof routed>>, status: Status, n = 1) {
  const rows = [];
  for (let i = 0; i < n; i += 1) {
    rows.push(
      await seedDelivery(t, {
        orgId,
        submissionId: null,
        formId: r.formId,
        routeId: r.routeId,
        destinationId: r.destId,
        status,
        attempts: status === 'pending' ? 0 : 10,
        nextAttemptAt: status === 'failed' ? new Date(Date.now() + 3_600_000) : null,
        lastError: status === 'sent' ? null : 'receiver answered 500',
      }),
    );
  }
  return rows.map((d) => d.id);
}

const rowsOf = (ids: string[]) => t.deps.database.db.select().from(deliveries).where(inArray(deliveries.id, ids));
const replayedEvents = () =>
  t.deps.database.db
    .select()
    .from(events)
    .where(and(eq(events.orgId, orgId), eq(events.type, 'deliveries.replayed')));

describe('POST /v1/deliveries/retry (bulk replay)', () => {
  it('queues every dead delivery of a destination with a fresh budget, leaves other statuses, and logs one event', async () => {
    const r = await routed();
    const other = await routed();
    const dead = await seed(r, 'dead', 3);
    const failed = await seed(r, 'failed');
    const sent = await seed(r, 'sent');
    const elsewhere = await seed(other, 'dead');
    const before = (await replayedEvents()).length;
    const res = await t.api('POST', '/v1/deliveries/retry', key, { json: { destination_id: r.destId } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ matched: 3, queued: 3 });
    for (const d of await rowsOf(dead)) {
      expect(d).toMatchObject({ status: 'pending', attempts: 0, leaseUntil: null });
      expect(d.nextAttemptAt?.getTime()).toBeLessThanOrEqual(Date.now());
    }
    expect((await rowsOf(failed))[0].status).toBe('failed');
    expect((await rowsOf(sent))[0].status).toBe('sent');
    expect((await rowsOf(elsewhere))[0].status).toBe('dead');
    const evs = await replayedEvents();
    expect(evs).toHaveLength(before + 1);
    const ev = evs[evs.length - 1];
    expect(ev.subject).toMatchObject({ destination_id: r.destId });
    expect(ev.data).toEqual({ filter: { destination_id: r.destId, status: ['dead'] }, matched: 3, queued: 3 });
  });

  it('filters by status list, route, form and created_at (since inclusive, until exclusive)', async () => {
    const r = await routed();
    const [oldDead] = await seed(r, 'dead');
    const [newDead] = await seed(r, 'dead');
    const [newFailed] = await seed(r, 'failed');
    const db = t.deps.database.db;
    await db
      .update(deliveries)
      .set({ createdAt: new Date('2026-01-01T00:00:00Z') })
      .where(eq(deliveries.id, oldDead));
    const since = await t.api('POST', '/v1/deliveries/retry', key, {
      json: { route_id: r.routeId, status: ['dead', 'failed'], since: '2026-01-02T00:00:00Z' },
    });
    expect(since.json).toEqual({ matched: 2, queued: 2 });
    expect((await rowsOf([newDead, newFailed])).map((d) => d.status)).toEqual(['pending', 'pending']);
    expect((await rowsOf([oldDead]))[0].status).toBe('dead');
    const until = await t.api('POST', '/v1/deliveries/retry', key, {
      json: { form_id: r.formId, until: '2026-01-01T00:00:00Z' },
    });
    expect(until.json).toEqual({ matched: 0, queued: 0 });
    const upTo = await t.api('POST', '/v1/deliveries/retry', key, {
      json: { form_id: r.formId, until: '2026-01-01T00:00:01Z' },
    });
    expect(upTo.json).toEqual({ matched: 1, queued: 1 });
  });

  it('works through more rows than one batch', async () => {
    const r = await routed();
    const n = REPLAY_BATCH * 2 + 7;
    const now = new Date();
    const rows = Array.from({ length: n }, () => {
      const id = newId('delivery');
      return {
        id,
        orgId,
        submissionId: null,
        routeId: r.routeId,
        destinationId: r.destId,
        formId: r.formId,
        status: 'dead',
        attempts: 10,
        maxAttempts: 10,
        payload: { id },
        createdAt: now,
      };
    });
    for (let i = 0; i < n; i += 500) await t.deps.database.db.insert(deliveries).values(rows.slice(i, i + 500));
    const res = await t.api('POST', '/v1/deliveries/retry', key, { json: { destination_id: r.destId } });
    expect(res.json).toEqual({ matched: n, queued: n });
    const left = await t.deps.database.db
      .select({ id: deliveries.id })
      .from(deliveries)
      .where(and(eq(deliveries.destinationId, r.destId), eq(deliveries.status, 'dead')));
    expect(left).toHaveLength(0);
  });

  it('keeps the deliveries of a disabled destination waiting (pending, not due)', async () => {
    const r = await routed();
    const dead = await seed(r, 'dead');
    await t.deps.database.db.update(destinations).set({ enabled: false }).where(eq(destinations.id, r.destId));
    const res = await t.api('POST', '/v1/deliveries/retry', key, { json: { destination_id: r.destId } });
    expect(res.json).toEqual({ matched: 1, queued: 1 });
    expect((await rowsOf(dead))[0]).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: null });
  });

  it('answers the same for a repeated Idempotency-Key and appends no second event', async () => {
    const r = await routed();
    await seed(r, 'dead', 2);
    const headers = { 'idempotency-key': `replay-${crypto.randomUUID()}` };
    const first = await t.api('POST', '/v1/deliveries/retry', key, { json: { destination_id: r.destId }, headers });
    const count = (await replayedEvents()).length;
    const again = await t.api('POST', '/v1/deliveries/retry', key, { json: { destination_id: r.destId }, headers });
    expect(first.json).toEqual({ matched: 2, queued: 2 });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayedEvents()).toHaveLength(count);
  });

  it('refuses a filter of status alone (422 with a hint) and bad input', async () => {
    for (const json of [{}, { status: ['dead'] }, { until: '2026-01-01T00:00:00Z' }]) {
      const res = await t.api('POST', '/v1/deliveries/retry', key, { json });
      expect(res.status).toBe(422);
      expect(res.json.error.code).toBe('validation_failed');
      expect(res.json.error.hint).toMatch(/destination_id, route_id, form_id or since/);
    }
    for (const json of [{ since: 'yesterday' }, { form_id: 'fm_x', status: ['sent'] }, { form_id: 'fm_x', bogus: 1 }]) {
      expect((await t.api('POST', '/v1/deliveries/retry', key, { json })).status).toBe(422);
    }
  });

  it('answers 401 without a key, 403 for a read key, 404 for another organization’s destination, route or form', async () => {
    const mine = await routed();
    const dead = await seed(mine, 'dead');
    const theirs = await routed(otherKey);
    expect((await t.api('POST', '/v1/deliveries/retry', null, { json: { form_id: mine.formId } })).status).toBe(401);
    expect((await t.api('POST', '/v1/deliveries/retry', readKey, { json: { form_id: mine.formId } })).status).toBe(403);
    for (const json of [
      { destination_id: theirs.destId },
      { route_id: theirs.routeId },
      { form_id: theirs.formId },
      { form_id: mine.formId, destination_id: theirs.destId },
    ]) {
      const res = await t.api('POST', '/v1/deliveries/retry', key, { json });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('not_found');
      expect(res.json.error.hint).toBeTruthy();
    }
    // Organization B cannot reach A's deliveries through a since-only filter either.
    const b = await t.api('POST', '/v1/deliveries/retry', otherKey, { json: { since: '2020-01-01T00:00:00Z' } });
    expect(b.status).toBe(200);
    expect((await rowsOf(dead))[0].status).toBe('dead');
  });
});

describe('POST /v1/webhooks/{id}/deliveries/retry', () => {
  async function hookWithDead(k = key, n = 2) {
    const hook = await t.api('POST', '/v1/webhooks', k, {
      json: { url: 'https://hooks.example.com/events', events: ['delivery.dead'] },
    });
    const owner = await orgIdOf(t, k);
    const ids = Array.from({ length: n }, () => newId('webhookDelivery'));
    await t.deps.database.db.insert(systemWebhookDeliveries).values(
      ids.map((id) => ({
        id,
        orgId: owner,
        webhookId: hook.json.id,
        eventId: newId('event'),
        eventType: 'delivery.dead',
        status: 'dead',
        attempts: 10,
        maxAttempts: 10,
        payload: { id },
      })),
    );
    return { hookId: hook.json.id as string, ids };
  }

  it("queues a system webhook's dead deliveries with a fresh budget; 404 for another organization's webhook", async () => {
    const { hookId, ids } = await hookWithDead();
    const res = await t.api('POST', `/v1/webhooks/${hookId}/deliveries/retry`, key, { json: {} });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ matched: 2, queued: 2 });
    const rows = await t.deps.database.db
      .select()
      .from(systemWebhookDeliveries)
      .where(inArray(systemWebhookDeliveries.id, ids));
    for (const d of rows) expect(d).toMatchObject({ status: 'pending', attempts: 0 });
    const ev = (await replayedEvents()).find((e) => e.subject.webhook_id === hookId);
    expect(ev?.data).toMatchObject({ matched: 2, queued: 2 });
    const theirs = await hookWithDead(otherKey, 1);
    const foreign = await t.api('POST', `/v1/webhooks/${theirs.hookId}/deliveries/retry`, key, { json: {} });
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('not_found');
    expect((await t.api('POST', `/v1/webhooks/${hookId}/deliveries/retry`, readKey, { json: {} })).status).toBe(403);
  });
});
