import crypto from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinations, systemWebhooks } from '../../server/db/schema.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { orgIdOf } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp({
  env: { RETRY_BASE_MS: '20', WEBHOOK_TIMEOUT_MS: '1000' },
  worker: true,
});
const receiver = fileReceivers();

/** A form routed to a webhook destination at `url`; returns ids. */
async function routed(url: string, config: Record<string, unknown> = {}, k = key) {
  const form = await t.api('POST', '/v1/forms', k, { json: { name: `F ${crypto.randomUUID().slice(0, 8)}` } });
  const dest = await t.api('POST', '/v1/destinations', k, {
    json: { type: 'webhook', name: 'hook', config: { url, ...config } },
  });
  expect(dest.status).toBe(201);
  const route = await t.api('POST', '/v1/routes', k, { json: { form_id: form.json.id, destination_id: dest.json.id } });
  expect(route.status).toBe(201);
  return { formId: form.json.id as string, destId: dest.json.id as string, routeId: route.json.id as string };
}

async function submit(formId: string, data: Record<string, unknown>) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json as { submission_id: string; status: string };
}

async function deliveryOf(submissionId: string, k = key) {
  const r = await t.api('GET', `/v1/deliveries?submission_id=${submissionId}`, k);
  expect(r.json.data).toHaveLength(1);
  return r.json.data[0];
}

const getDelivery = async (id: string) => (await t.api('GET', `/v1/deliveries/${id}`, key)).json;
const waitStatus = (id: string, status: string, ms = 15_000) =>
  until(
    `delivery ${id} ${status}`,
    async () => {
      const d = await getDelivery(id);
      return d.status === status ? d : null;
    },
    ms,
  );

async function eventsOf(type: string) {
  return t.deps.database.rows<{ type: string; subject: any; data: any }>(
    sql`select type, subject, data from events where type = ${type}`,
  );
}

describe('the delivery worker', () => {
  it('sends a webhook with the spec headers, the payload snapshot, and records sent', async () => {
    const hook = await receiver();
    const { formId, destId } = await routed(hook.url, { headers: { 'X-Token': 'abc' } });
    const sub = await submit(formId, { name: 'Ada', email: 'ada@example.com' });
    const d = await deliveryOf(sub.submission_id);
    const sent = await waitStatus(d.id, 'sent');
    const [req] = hook.requests;
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toMatch(/^application\/json/);
    expect(req.headers['service-delivery']).toBe(d.id);
    expect(req.headers['service-event']).toBe('submission.received');
    expect(req.headers['x-token']).toBe('abc');
    expect(req.headers['service-signature']).toBeUndefined();
    expect(req.json).toEqual(sent.payload);
    expect(req.json).toMatchObject({
      id: d.id,
      type: 'submission.received',
      form: { id: formId },
      data: { name: 'Ada' },
    });
    expect(sent).toMatchObject({ attempts: 1, last_error: null, last_response: { ok: true, status_code: 200 } });
    expect(typeof sent.sent_at).toBe('string');
    const dest = (await t.api('GET', `/v1/destinations/${destId}`, key)).json;
    expect(dest).toMatchObject({ health: 'ok', verified: true });
    const evs = await eventsOf('delivery.sent');
    expect(evs.some((e) => e.subject.delivery_id === d.id)).toBe(true);
  });

  it('signs with Service-Signature over "t.rawBody" when the destination has a secret', async () => {
    const hook = await receiver();
    const secret = 'whsec_test_secret_value';
    const { formId } = await routed(hook.url, { secret });
    const sub = await submit(formId, { name: 'Signed' });
    await waitStatus((await deliveryOf(sub.submission_id)).id, 'sent');
    const req = hook.requests[0];
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['service-signature']));
    expect(m).not.toBeNull();
    const expected = crypto
      .createHmac('sha256', secret)
      .update(`${m?.[1]}.${req.raw.toString('utf8')}`)
      .digest('hex');
    expect(m?.[2]).toBe(expected);
    expect(Math.abs(Date.now() / 1000 - Number(m?.[1]))).toBeLessThan(300);
  });

  it('retries a failing receiver with backoff and ends sent once it recovers', async () => {
    const hook = await receiver((_r, n) => (n <= 3 ? { status: 500, body: 'boom' } : { status: 200 }));
    const { formId } = await routed(hook.url);
    const sub = await submit(formId, { name: 'retry' });
    const d = await deliveryOf(sub.submission_id);
    const failed = await waitStatus(d.id, 'failed');
    expect(failed.attempts).toBeGreaterThanOrEqual(1);
    expect(typeof failed.next_attempt_at).toBe('string');
    expect(failed.last_response).toMatchObject({ ok: false, status_code: 500 });
    expect(failed.last_error).toMatch(/500/);
    const sent = await waitStatus(d.id, 'sent');
    expect(sent.attempts).toBe(4);
    expect(hook.requests.map((r) => r.headers['service-delivery'])).toEqual([d.id, d.id, d.id, d.id]);
  });

  it('stops at a 410: dead after one attempt, saying why', async () => {
    const hook = await receiver(() => ({ status: 410, body: 'gone' }));
    const { formId } = await routed(hook.url);
    const d = await deliveryOf((await submit(formId, { name: 'gone' })).submission_id);
    const dead = await waitStatus(d.id, 'dead');
    expect(dead.attempts).toBe(1);
    expect(dead.last_error).toMatch(/410/);
    expect(hook.requests).toHaveLength(1);
  });

  it('fails a hanging receiver at WEBHOOK_TIMEOUT_MS and keeps serving other destinations', async () => {
    const slow = await receiver(() => ({ hangMs: 5000 }));
    const fast = await receiver();
    const a = await routed(slow.url);
    const b = await routed(fast.url);
    const subsA = [];
    for (let i = 0; i < 6; i += 1) subsA.push(await submit(a.formId, { n: i }));
    const dB = await deliveryOf((await submit(b.formId, { name: 'fast' })).submission_id);
    await waitStatus(dB.id, 'sent');
    const dA = await deliveryOf(subsA[0].submission_id);
    const failed = await waitStatus(dA.id, 'failed');
    expect(failed.last_error).toMatch(/timed out/i);
  });

  it('retries a dead delivery on request with a fresh attempt budget; other states answer 409', async () => {
    const hook = await receiver(() => ({ status: 410 }));
    const { formId, destId } = await routed(hook.url);
    const d = await deliveryOf((await submit(formId, { name: 'again' })).submission_id);
    await waitStatus(d.id, 'dead');
    expect((await t.api('POST', `/v1/deliveries/${d.id}/retry`, readKey, { json: {} })).status).toBe(403);
    expect((await t.api('POST', `/v1/deliveries/${d.id}/retry`, otherKey, { json: {} })).status).toBe(404);
    hook.set(() => ({ status: 200 }));
    const r = await t.api('POST', `/v1/deliveries/${d.id}/retry`, key, { json: {} });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ id: d.id, status: 'pending', attempts: 0 });
    // The 410 switched the destination off: the retried delivery waits, not due, until it is back on.
    expect(r.json.next_attempt_at).toBeNull();
    const on = await t.api('PATCH', `/v1/destinations/${destId}`, key, { json: { enabled: true } });
    expect(on.json).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    const sent = await waitStatus(d.id, 'sent');
    expect(sent.attempts).toBe(1);
    expect(hook.requests).toHaveLength(2);
    const skipped = await routedSkipped();
    const again = await t.api('POST', `/v1/deliveries/${skipped}/retry`, key, { json: {} });
    expect(again.status).toBe(409);
    expect(again.json.error.hint).toBeTruthy();
  });

  it('dispatches subscribed events to a system webhook, signed, through the same worker', async () => {
    const hook = await receiver();
    const orgId = await orgIdOf(t, key);
    const secret = 'sys_secret_value_1';
    const whId = newId('webhook');
    await t.deps.database.db
      .insert(systemWebhooks)
      .values({ id: whId, orgId, url: hook.url, events: ['delivery.sent'], secret });
    const target = await receiver();
    const { formId } = await routed(target.url);
    const d = await deliveryOf((await submit(formId, { name: 'evt' })).submission_id);
    await waitStatus(d.id, 'sent');
    const [req] = await hook.waitFor((r) => r.some((x) => x.json?.subject?.delivery_id === d.id));
    const got = hook.requests.find((x) => x.json?.subject?.delivery_id === d.id) ?? req;
    expect(got.headers['service-event']).toBe('delivery.sent');
    expect(got.json).toMatchObject({ type: 'delivery.sent', subject: { delivery_id: d.id } });
    const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got.headers['service-signature']));
    const expected = crypto
      .createHmac('sha256', secret)
      .update(`${m?.[1]}.${got.raw.toString('utf8')}`)
      .digest('hex');
    expect(m?.[2]).toBe(expected);
    const rows = await until('system webhook delivery sent', async () => {
      const r = await t.deps.database.rows<{ status: string }>(
        sql`select status from system_webhook_deliveries where webhook_id = ${whId}`,
      );
      return r.length && r.every((x) => x.status === 'sent') ? r : null;
    });
    expect(rows.length).toBeGreaterThanOrEqual(1);
  });

  it('sends email deliveries through SMTP with the subject template and Reply-To', async () => {
    const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Mail form' } });
    const to = `inbox-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'email', name: 'mail', config: { to: [to], subject_template: 'New: {{form.name}}' } },
    });
    await t.api('POST', '/v1/routes', key, { json: { form_id: form.json.id, destination_id: dest.json.id } });
    const sub = await submit(form.json.id, { name: 'Ada', sender: 'ada@example.com', note: '<b>hi</b>' });
    const mail = await t.smtp.waitFor((m) => m.to.includes(to), 10_000);
    expect(mail.subject).toBe('New: Mail form');
    expect(mail.parsed.replyTo?.value.map((a) => a.address)).toEqual(['ada@example.com']);
    await waitStatus((await deliveryOf(sub.submission_id)).id, 'sent');
  });
});

/** A delivery that was skipped at planning (route window in the past). */
async function routedSkipped() {
  const hook = await receiver();
  const form = await t.api('POST', '/v1/forms', key, { json: { name: `S ${crypto.randomUUID().slice(0, 8)}` } });
  const dest = await t.api('POST', '/v1/destinations', key, {
    json: { type: 'webhook', name: 'h', config: { url: hook.url } },
  });
  await t.api('POST', '/v1/routes', key, {
    json: {
      form_id: form.json.id,
      destination_id: dest.json.id,
      window: { from: null, until: '2000-01-01T00:00:00Z' },
    },
  });
  const d = await deliveryOf((await submit(form.json.id, { name: 'late' })).submission_id);
  expect(d.status).toBe('skipped');
  return d.id as string;
}

describe('dead deliveries and destination health', () => {
  let fast: TestEnv;
  let fastKey: string;
  beforeAll(async () => {
    fast = await startTestApp({ RETRY_BASE_MS: '2' });
    await fast.startWorker();
    fastKey = (await fast.onboard()).key;
  });
  afterAll(() => fast.close());

  it('gives up after 10 webhook attempts: dead, payload kept, delivery.dead and destination.failing once', {
    timeout: 90_000,
  }, async () => {
    const hook = await receiver(() => ({ status: 500, body: 'down' }));
    const form = await fast.api('POST', '/v1/forms', fastKey, { json: { name: 'Dead' } });
    const dest = await fast.api('POST', '/v1/destinations', fastKey, {
      json: { type: 'webhook', name: 'down', config: { url: hook.url } },
    });
    await fast.api('POST', '/v1/routes', fastKey, { json: { form_id: form.json.id, destination_id: dest.json.id } });
    const r = await fast.request('POST', `/s/${form.json.id}`, {
      json: { name: 'x' },
      headers: { accept: 'application/json' },
    });
    const list = await fast.api('GET', `/v1/deliveries?submission_id=${r.json.submission_id}`, fastKey);
    const id = list.json.data[0].id;
    const dead = await until(
      'dead',
      async () => {
        const d = (await fast.api('GET', `/v1/deliveries/${id}`, fastKey)).json;
        return d.status === 'dead' ? d : null;
      },
      80_000,
    );
    expect(dead.attempts).toBe(10);
    expect(dead.payload).toMatchObject({ id, type: 'submission.received' });
    expect(dead.last_error).toMatch(/10 attempts/);
    expect(hook.requests).toHaveLength(10);
    const types = await fast.deps.database.rows<{ type: string }>(
      sql`select type from events where subject->>'destination_id' = ${dest.json.id} order by id`,
    );
    expect(types.filter((e) => e.type === 'delivery.dead')).toHaveLength(1);
    expect(types.filter((e) => e.type === 'destination.failing')).toHaveLength(1);
    const [row] = await fast.deps.database.db.select().from(destinations).where(eq(destinations.id, dest.json.id));
    expect(row.health).toBe('failing');
    expect(row.consecutiveFailures).toBe(10);
  });
});

describe('POST /v1/destinations/{id}/test', () => {
  it('sends a sample through the adapter and reports the answer; a success verifies the destination', async () => {
    const hook = await receiver(() => ({ status: 200, body: 'pong-123' }));
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 't', config: { url: hook.url } },
    });
    const r = await t.api('POST', `/v1/destinations/${dest.json.id}/test`, key, { json: {} });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, status_code: 200, error: null });
    expect(r.json.response_excerpt).toContain('pong-123');
    expect(typeof r.json.latency_ms).toBe('number');
    expect(hook.requests[0].headers['service-event']).toBe('destination.test');
    expect((await t.api('GET', `/v1/destinations/${dest.json.id}`, key)).json).toMatchObject({
      verified: true,
      health: 'ok',
    });
  });

  it('reports a failing receiver as ok:false with its status, and guards access', async () => {
    const hook = await receiver(() => ({ status: 500, body: 'nope' }));
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 't', config: { url: hook.url } },
    });
    const r = await t.api('POST', `/v1/destinations/${dest.json.id}/test`, key, { json: {} });
    expect(r.json).toMatchObject({ ok: false, status_code: 500 });
    expect((await t.api('GET', `/v1/destinations/${dest.json.id}`, key)).json.verified).toBe(false);
    expect((await t.api('POST', `/v1/destinations/${dest.json.id}/test`, otherKey, { json: {} })).status).toBe(404);
    expect((await t.api('POST', `/v1/destinations/${dest.json.id}/test`, readKey, { json: {} })).status).toBe(403);
    expect((await t.api('POST', `/v1/destinations/${dest.json.id}/test`, null, { json: {} })).status).toBe(401);
  });

  it('sends a slack sample through the real adapter: {text, blocks}, 200 "ok" marks it verified', async () => {
    const hook = await receiver(() => ({ status: 200, body: 'ok' }));
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'slack', name: 's', config: { url: hook.url } },
    });
    expect(dest.status).toBe(201);
    const r = await t.api('POST', `/v1/destinations/${dest.json.id}/test`, key, { json: {} });
    expect(r.json).toMatchObject({ ok: true, status_code: 200, error: null });
    expect(hook.requests[0].json.text).toContain('Destination test');
    expect(hook.requests[0].json.blocks[0]).toMatchObject({ type: 'header' });
    expect((await t.api('GET', `/v1/destinations/${dest.json.id}`, key)).json.verified).toBe(true);
  });

  it('reports a deleted discord webhook (404) as ok:false saying so', async () => {
    const hook = await receiver(() => ({
      status: 404,
      body: '{"message": "Unknown Webhook", "code": 10015}',
      headers: { 'content-type': 'application/json' },
    }));
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'discord', name: 'd', config: { url: hook.url } },
    });
    const r = await t.api('POST', `/v1/destinations/${dest.json.id}/test`, key, { json: {} });
    expect(r.json).toMatchObject({ ok: false, status_code: 404 });
    expect(r.json.error).toMatch(/deleted.*Unknown Webhook/);
    expect(hook.requests[0].json.allowed_mentions).toEqual({ parse: [] });
  });
});
