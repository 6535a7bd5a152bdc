import crypto from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { deliveries, deliveryAttempts } from '../../server/db/schema.js';
import { quotaApp } from '../helpers/quota.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp({
  // Retries every 10-2560 ms, so a delivery answered 500 dies within seconds.
  env: { RETRY_BASE_MS: '10', WEBHOOK_TIMEOUT_MS: '10000' },
  worker: true,
});
const receiver = fileReceivers();

type Explanation = {
  outcome: string;
  summary: string;
  status: string;
  quarantine_reason: string | null;
  checks: { check: string; verdict: string; reason: string; spam?: { score: number }; violated_paths?: string[] }[];
  routes: { route_id: string; via: string; reason: string; delivery_id: string | null; detail: string }[];
  deliveries: {
    id: string;
    status: string;
    state: string;
    why: string;
    attempts: { n: number; status_code: number | null; latency_ms: number; outcome: string; error: string | null }[];
  }[];
};

async function routedForm(url: string, route: Record<string, unknown> = {}, name = 'leads hook') {
  const form = await t.api('POST', '/v1/forms', key, { json: { name: `F ${crypto.randomUUID().slice(0, 8)}` } });
  const dest = await t.api('POST', '/v1/destinations', key, { json: { type: 'webhook', name, config: { url } } });
  const r = await t.api('POST', '/v1/routes', key, {
    json: { form_id: form.json.id, destination_id: dest.json.id, ...route },
  });
  expect(r.status, r.text).toBe(201);
  return { formId: form.json.id as string, destId: dest.json.id as string, routeId: r.json.id as string };
}

async function submit(formId: string, data: Record<string, unknown>, headers: Record<string, string> = {}) {
  const r = await t.request('POST', `/s/${formId}`, {
    json: data,
    headers: { accept: 'application/json', ...headers },
  });
  expect(r.status, r.text).toBe(200);
  return r.json.submission_id as string;
}

async function explain(id: string, k = readKey): Promise<Explanation> {
  const r = await t.api('GET', `/v1/submissions/${id}/explain`, k);
  expect(r.status, r.text).toBe(200);
  return r.json;
}

/** Polls the explanation until every delivery was sent. */
const sent = (id: string) =>
  until('sent', async () => {
    const x = await explain(id);
    return x.outcome === 'sent' ? x : null;
  });

const check = (e: Explanation, name: string) => e.checks.find((c) => c.check === name);

/** A receiver's answers: 500 to its first request, 202 to every later one. */
function failOnce() {
  let n = 0;
  return () => (n++ === 0 ? { status: 500, body: 'down' } : { status: 202, body: 'ok' });
}

/** The delivery's stored attempt rows, oldest first. */
const storedAttempts = (deliveryId: string) =>
  t.deps.database.db
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.deliveryId, deliveryId))
    .orderBy(asc(deliveryAttempts.id));

/** Retries a delivery by hand and polls until the retry was sent and explained with `sentCount` successes. */
async function retrySent(submissionId: string, deliveryId: string, sentCount: number) {
  const r = await t.api('POST', `/v1/deliveries/${deliveryId}/retry`, key);
  expect(r.status, r.text).toBe(202);
  return until('sent again', async () => {
    const x = await explain(submissionId);
    const d = x.deliveries[0];
    return d.status === 'sent' && d.attempts.filter((a) => a.outcome === 'sent').length === sentCount ? x : null;
  });
}

describe('GET /v1/submissions/{id}/explain', () => {
  it('a received and sent submission: checks passed, the route planned, one recorded attempt with status and latency', async () => {
    const hook = await receiver(() => ({ status: 202, body: 'ok' }));
    const { formId, routeId } = await routedForm(hook.url);
    const id = await submit(formId, { email: 'ada@example.com', message: 'hello there' });
    const e = await sent(id);
    expect(e.summary).toMatch(/^Received and sent to webhook "leads hook"\.$/);
    expect(check(e, 'origin')?.verdict).toBe('passed');
    expect(check(e, 'rate_limit')?.verdict).toBe('passed');
    expect(check(e, 'spam')?.spam?.score).toBeTypeOf('number');
    expect(check(e, 'paused')?.verdict).toBe('passed');
    expect(e.routes).toEqual([expect.objectContaining({ route_id: routeId, via: 'direct', reason: 'planned' })]);
    const [d] = e.deliveries;
    expect(d).toMatchObject({ status: 'sent', state: 'sent' });
    // One attempt on a quiet machine; on a loaded one an earlier attempt may time out: each is kept.
    const last = d.attempts.at(-1);
    expect(last).toMatchObject({ n: d.attempts.length, status_code: 202, outcome: 'sent', error: null });
    expect(last?.latency_ms).toBeGreaterThanOrEqual(0);
    expect(d.attempts.slice(0, -1).every((a) => a.outcome === 'failed')).toBe(true);
    expect(hook.requests.length).toBeGreaterThanOrEqual(d.attempts.length);
  });

  it('a quarantined submission (origin rejected): the failed check, the route skipped for quality', async () => {
    const hook = await receiver();
    const { formId } = await routedForm(hook.url);
    const p = await t.api('PATCH', `/v1/forms/${formId}`, key, {
      json: { settings: { allowed_origins: ['https://shop.example'] } },
    });
    expect(p.status, p.text).toBe(200);
    const r = await t.request('POST', `/s/${formId}`, {
      json: { message: 'hi' },
      headers: { accept: 'application/json', origin: 'https://evil.example' },
    });
    expect(r.status).toBe(403);
    const e = await explain(r.json.error.details.submission_id);
    expect(e).toMatchObject({ status: 'quarantined', quarantine_reason: 'origin_rejected', outcome: 'not_sent' });
    expect(check(e, 'origin')).toMatchObject({ verdict: 'failed' });
    expect(check(e, 'origin')?.reason).toContain('https://evil.example');
    expect(check(e, 'schema')?.verdict).toBe('not_checked');
    expect(e.routes[0]).toMatchObject({ reason: 'quality' });
    expect(e.deliveries[0]).toMatchObject({ status: 'skipped', state: 'skipped', attempts: [] });
    expect(e.summary).toMatch(
      /^Quarantined \(origin_rejected\); not sent to webhook "leads hook": skipped: the route excludes/,
    );
    expect(hook.requests).toHaveLength(0);
  });

  it('a submission outside the route window: skipped by window, read from the stored delivery', async () => {
    const hook = await receiver();
    const { formId, routeId } = await routedForm(hook.url, { window: { from: '2099-01-01T00:00:00Z' } });
    const id = await submit(formId, { message: 'early' });
    // Today's settings do not decide: opening the window later leaves the stored reason as it was.
    await t.api('PATCH', `/v1/routes/${routeId}`, key, { json: { window: { from: null } } });
    const e = await explain(id);
    expect(e.outcome).toBe('not_sent');
    expect(e.routes[0]).toMatchObject({ route_id: routeId, reason: 'window' });
    expect(e.summary).toContain("outside the route's time window");
  });

  it('a dead delivery: a real receiver answering 500 until max attempts; every attempt kept', async () => {
    const hook = await receiver(() => ({ status: 500, body: 'down' }));
    const { formId, destId } = await routedForm(hook.url, {}, 'crm');
    const id = await submit(formId, { message: 'will fail' });
    const e = await until(
      'dead',
      async () => {
        const x = await explain(id);
        return x.outcome === 'failed' ? x : null;
      },
      60_000,
    );
    const [d] = e.deliveries;
    expect(d).toMatchObject({ status: 'dead', state: 'gave_up' });
    expect(d.attempts).toHaveLength(10);
    expect(d.attempts.map((a) => a.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Every answered attempt recorded its 500 (on a loaded machine one may time out instead: no status).
    for (const a of d.attempts) expect(a.status_code === 500 || (a.status_code === null && a.error)).toBeTruthy();
    expect(d.attempts.some((a) => a.status_code === 500)).toBe(true);
    expect(d.attempts.slice(0, 9).every((a) => a.outcome === 'failed')).toBe(true);
    expect(d.attempts[9].outcome).toBe('dead');
    expect(d.why).toMatch(/^Gave up after 10 attempts; the last: /);
    expect(e.summary).toBe(
      `Not sent to webhook "crm": g${d.why.slice(1)} POST /v1/deliveries/${d.id}/retry sends it again once the cause is fixed.`,
    );
    expect(hook.requests.length).toBeGreaterThanOrEqual(10);
    expect(destId).toBeTruthy();
  });

  it('a delivery waiting for a disabled destination says so, with the call that sends the waiting ones', async () => {
    const hook = await receiver();
    const { formId, destId } = await routedForm(hook.url, {}, 'Slack #leads');
    const off = await t.api('PATCH', `/v1/destinations/${destId}`, key, { json: { enabled: false } });
    expect(off.status).toBe(200);
    const id = await submit(formId, { message: 'waits' });
    const e = await explain(id);
    expect(e.outcome).toBe('waiting');
    expect(e.routes[0].reason).toBe('destination_disabled');
    expect(e.summary).toBe(
      `Not sent to webhook "Slack #leads": the destination has been disabled (by hand); PATCH /v1/destinations/${destId} {"enabled":true} sends the 1 waiting.`,
    );
  });

  it('a route created after the submission: no delivery row, said without inventing', async () => {
    const form = await t.api('POST', '/v1/forms', key, { json: { name: 'late route' } });
    const id = await submit(form.json.id, { message: 'before any route' });
    const e0 = await explain(id);
    expect(e0).toMatchObject({ outcome: 'nothing_planned', routes: [], deliveries: [] });
    expect(e0.summary).toBe('Received; the form and its streams had no route, so nothing was sent.');
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'later', config: { url: 'http://127.0.0.1:9/x' } },
    });
    await t.api('POST', '/v1/routes', key, { json: { form_id: form.json.id, destination_id: dest.json.id } });
    const e = await explain(id);
    expect(e.routes).toEqual([expect.objectContaining({ reason: 'not_planned', delivery_id: null, via: 'direct' })]);
    expect(e.routes[0].detail).toMatch(/created at .* after it came in/);
  });

  it("another organization's submission is a 404 with a hint", async () => {
    const hook = await receiver();
    const { formId } = await routedForm(hook.url);
    const id = await submit(formId, { message: 'mine' });
    const r = await t.api('GET', `/v1/submissions/${id}/explain`, otherKey);
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'not_found' });
    expect(r.json.error.hint).toBeTruthy();
  });

  it('erasure deletes the attempts of the erased submission', async () => {
    const hook = await receiver(failOnce());
    const { formId } = await routedForm(hook.url);
    const id = await submit(formId, { email: 'erase.me@example.com' });
    const e = await sent(id);
    const deliveryId = e.deliveries[0].id;
    const kept = () =>
      t.deps.database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId));
    // The failed first attempt is a row; the success is the delivery row itself.
    expect((await kept()).length).toBeGreaterThan(0);
    const r = await t.api('POST', '/v1/submissions/erase', key, { json: { email: 'erase.me@example.com' } });
    expect(r.status, r.text).toBe(200);
    expect(await kept()).toHaveLength(0);
  });

  it('a sent delivery stores no attempt row: explain reads its success from the delivery row, failures from theirs', async () => {
    const hook = await receiver(failOnce());
    const { formId } = await routedForm(hook.url);
    const id = await submit(formId, { message: 'fails, then sent' });
    const e = await sent(id);
    const [d] = e.deliveries;
    const rows = await storedAttempts(d.id);
    expect(rows.map((a) => a.outcome)).toEqual(rows.map(() => 'failed'));
    expect(rows[0]).toMatchObject({ n: 1, statusCode: 500 });
    expect(d.attempts).toHaveLength(rows.length + 1);
    expect(d.attempts.at(-1)).toMatchObject({ n: rows.length + 1, status_code: 202, outcome: 'sent', error: null });
    expect(d.attempts[0]).toMatchObject({ n: 1, status_code: 500, outcome: 'failed' });
  });

  it("a retry of a sent delivery writes the first run's success down before the new run; each run's success is shown once", async () => {
    const hook = await receiver(() => ({ status: 202, body: 'ok' }));
    const { formId } = await routedForm(hook.url);
    const id = await submit(formId, { message: 'sent, then sent again' });
    const first = (await sent(id)).deliveries[0];
    expect((await storedAttempts(first.id)).filter((a) => a.outcome === 'sent')).toHaveLength(0);
    const firstSuccess = first.attempts.at(-1);
    const again = (await retrySent(id, first.id, 2)).deliveries[0];
    const kept = (await storedAttempts(first.id)).filter((a) => a.outcome === 'sent');
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ n: firstSuccess?.n, statusCode: 202, latencyMs: firstSuccess?.latency_ms });
    expect(again.attempts.filter((a) => a.outcome === 'sent')).toEqual([
      expect.objectContaining({ ...firstSuccess }),
      expect.objectContaining({ status_code: 202, outcome: 'sent' }),
    ]);
    await retrySent(id, first.id, 3);
    expect((await storedAttempts(first.id)).filter((a) => a.outcome === 'sent')).toHaveLength(2);
  });

  it('a success row written by an earlier release is not shown twice nor written again by a retry', async () => {
    const hook = await receiver(() => ({ status: 202, body: 'ok' }));
    const { formId } = await routedForm(hook.url);
    const id = await submit(formId, { message: 'an older row' });
    const d = (await sent(id)).deliveries[0];
    const success = d.attempts.at(-1);
    const [row] = await t.deps.database.db.select().from(deliveries).where(eq(deliveries.id, d.id));
    // As the earlier release wrote it: started the float latency before sent_at, latency rounded.
    const latency = Number(row.lastResponse?.latency_ms);
    await t.deps.database.db.insert(deliveryAttempts).values({
      orgId: row.orgId,
      deliveryId: d.id,
      n: row.attempts,
      startedAt: new Date((row.sentAt as Date).getTime() - latency),
      latencyMs: Math.max(0, Math.round(latency)),
      statusCode: 202,
      error: null,
      nextAttemptAt: null,
      outcome: 'sent',
    });
    expect((await explain(id)).deliveries[0].attempts).toHaveLength(d.attempts.length);
    expect((await explain(id)).deliveries[0].attempts.at(-1)).toMatchObject({ n: success?.n, outcome: 'sent' });
    await retrySent(id, d.id, 2);
    expect((await storedAttempts(d.id)).filter((a) => a.outcome === 'sent')).toHaveLength(1);
  });

  it('deleting a form deletes the attempts of its deliveries', async () => {
    const hook = await receiver(failOnce());
    const { formId } = await routedForm(hook.url);
    const id = await submit(formId, { message: 'goes with its form' });
    const e = await sent(id);
    const kept = () =>
      t.deps.database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, e.deliveries[0].id));
    expect((await kept()).length).toBeGreaterThan(0);
    const del = await t.api('DELETE', `/v1/forms/${formId}`, key);
    expect(del.status, del.text).toBe(204);
    expect(await kept()).toHaveLength(0);
  });
});

describe('explain of a held over-quota submission', () => {
  it('says it is held by the quota, with its route planned held', async () => {
    const { t: q } = await quotaApp(1);
    try {
      const { key: k } = await q.onboard();
      const form = await q.api('POST', '/v1/forms', k, { json: { name: 'quota form' } });
      const dest = await q.api('POST', '/v1/destinations', k, {
        json: { type: 'webhook', name: 'hook', config: { url: 'http://127.0.0.1:9/hook' } },
      });
      await q.api('POST', '/v1/routes', k, { json: { form_id: form.json.id, destination_id: dest.json.id } });
      const post = async () =>
        (await q.request('POST', `/s/${form.json.id}`, { json: { n: 1 }, headers: { accept: 'application/json' } }))
          .json.submission_id as string;
      await post();
      const over = await post();
      const r = await q.api('GET', `/v1/submissions/${over}/explain`, k);
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ status: 'quarantined', quarantine_reason: 'over_quota', outcome: 'waiting' });
      expect(r.json.checks.find((c: { check: string }) => c.check === 'quota')).toMatchObject({ verdict: 'failed' });
      expect(r.json.routes[0]).toMatchObject({ reason: 'held' });
      expect(r.json.deliveries[0]).toMatchObject({ status: 'held', state: 'held' });
      expect(r.json.summary).toMatch(/^Quarantined \(over_quota\); not sent to webhook "hook" yet: held: /);
    } finally {
      await q.close();
    }
  });
});
