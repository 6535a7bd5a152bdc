import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import type { Deps } from '../../server/core/deps.js';
import { holdKeyFingerprint } from '../../server/fleet/keys.js';
import { createMetrics } from '../../server/fleet/metrics.js';
import { Readiness } from '../../server/fleet/readiness.js';
import { createLogger } from '../../server/log.js';
import { startServer } from '../../server/start.js';
import { Worker } from '../../server/worker/worker.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key } = await tenantApp();
const receiver = fileReceivers();
const hook = await receiver();
const formId = await formTo(hook.url);

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(level: string) {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}

/** The test app's deps with fleet settings and metrics, behind an app of their own. */
async function fleetApp(env: Record<string, string>) {
  const config = { ...t.deps.config, ...pick(loadConfig(env)) };
  const deps: Deps = { ...t.deps, config, readiness: new Readiness(t.deps.database) };
  deps.metrics = await createMetrics({ database: deps.database, sendsInFlight: () => 0, pool: null });
  const app = buildApp(deps);
  return { deps, app, get: (p: string, headers: Record<string, string> = {}) => app.request(p, { headers }) };
}
const pick = (c: ReturnType<typeof loadConfig>) => ({
  role: c.role,
  metrics: c.metrics,
  metricsToken: c.metricsToken,
  metricsPort: c.metricsPort,
  shutdownGraceMs: c.shutdownGraceMs,
});

async function formTo(url: string) {
  const form = await t.api('POST', '/v1/forms', key, { json: { name: 'Fleet form' } });
  if (form.status !== 201) throw new Error(`create form: ${form.text}`);
  const dest = await t.api('POST', '/v1/destinations', key, { json: { type: 'webhook', name: 'h', config: { url } } });
  await t.api('POST', '/v1/routes', key, { json: { form_id: form.json.id, destination_id: dest.json.id } });
  return form.json.id as string;
}

describe('fleet settings', () => {
  it('reads ROLE, METRICS and SHUTDOWN_GRACE_MS, and refuses what cannot work', () => {
    expect(pick(loadConfig({}))).toEqual({
      role: 'all',
      metrics: false,
      metricsToken: undefined,
      metricsPort: undefined,
      shutdownGraceMs: 10_000,
    });
    expect(loadConfig({ ROLE: 'worker', SHUTDOWN_GRACE_MS: '2500' })).toMatchObject({
      role: 'worker',
      shutdownGraceMs: 2500,
    });
    expect(() => loadConfig({ ROLE: 'web' })).toThrow(/ROLE must be one of all, api, worker/);
    expect(() => loadConfig({ METRICS: 'true' })).toThrow(/METRICS_TOKEN .* or METRICS_PORT/);
    expect(() => loadConfig({ METRICS: 'true', METRICS_PORT: 'x' })).toThrow(/METRICS_PORT must be a port/);
  });
});

describe('/healthz and /readyz', () => {
  it('healthz answers while the process lives; readyz 200 when migrated, 503 with a reason once stopping', async () => {
    const f = await fleetApp({});
    expect(await (await f.get('/healthz')).json()).toEqual({ ok: true });
    const ready = await f.get('/readyz');
    expect([ready.status, await ready.json()]).toEqual([200, { ok: true }]);
    f.deps.readiness?.stopping();
    const stopping = await f.get('/readyz');
    expect(stopping.status).toBe(503);
    expect(stopping.headers.get('retry-after')).toBe('2');
    expect(await stopping.json()).toEqual({ ok: false, reason: expect.stringMatching(/shutting down/) });
    expect((await f.get('/healthz')).status).toBe(200);
  });

  it('readyz answers 503 when the database lacks a migration of this build', async () => {
    const { database } = t.deps;
    const [row] = await database.prepared<{ m: string }>(
      'select max(created_at)::text as m from drizzle.__drizzle_migrations',
      [],
    );
    await database.prepared(
      'update drizzle.__drizzle_migrations set created_at = created_at - 1 where created_at = $1::bigint',
      [row.m],
    );
    try {
      const r = await (await fleetApp({})).get('/readyz');
      expect(r.status).toBe(503);
      expect(((await r.json()) as any).reason).toMatch(/lacks migrations/);
    } finally {
      await database.prepared(
        'update drizzle.__drizzle_migrations set created_at = $1::bigint where created_at = $1::bigint - 1',
        [row.m],
      );
    }
  });
});

describe('GET /metrics', () => {
  it('is not served unless METRICS=true', async () => {
    expect((await (await fleetApp({})).get('/metrics')).status).toBe(404);
  });

  it('asks for METRICS_TOKEN and lists every series with bounded labels', async () => {
    const f = await fleetApp({ METRICS: 'true', METRICS_TOKEN: 'scrape-me' });
    const denied = await f.get('/metrics');
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as any).error).toMatchObject({
      code: 'unauthorized',
      hint: expect.stringMatching(/METRICS_TOKEN/),
    });
    expect((await f.get('/metrics', { authorization: 'Bearer wrong-one' })).status).toBe(401);

    const sub = await f.app.request(`/s/${formId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 1 }),
    });
    expect(sub.status).toBe(200);
    await f.app.request(`/v1/forms/${formId}`, { headers: { authorization: `Bearer ${key}` } });
    await f.app.request('/no/such/path');

    const res = await f.get('/metrics', { authorization: 'Bearer scrape-me' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    for (const name of [
      'formsvc_http_request_duration_seconds_bucket',
      'formsvc_submissions_total',
      'formsvc_deliveries_total',
      'formsvc_delivery_latency_seconds_bucket',
      'formsvc_outbox_depth',
      'formsvc_outbox_depth_cap 10000',
      'formsvc_outbox_oldest_due_age_seconds',
      'formsvc_worker_sends_in_flight',
      'formsvc_db_pool_in_use',
      'formsvc_db_pool_waiting',
      'formsvc_nodejs_eventloop_lag_p99_seconds',
      'formsvc_process_resident_memory_bytes',
    ]) {
      expect(text, name).toContain(name);
    }
    expect(text).toContain('formsvc_submissions_total{status="received",reason="none"} 1');
    expect(text).toMatch(/formsvc_outbox_depth\{outbox="delivery",status="pending"\} \d+/);
    expect(text).toMatch(/operation="intake_submit",status_class="2xx"/);
    expect(text).toMatch(/operation="forms_get",status_class="2xx"/);
    expect(text).toMatch(/operation="unmatched",status_class="4xx"/);
    // No label value names an id or a path with one.
    expect(text).not.toContain(formId);
    expect(text).not.toMatch(/\/s\/|no\/such/);
  });
});

describe('ROLE=worker and METRICS_PORT in a started server', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-fleet-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('serves only /healthz, /readyz and /metrics; metrics on their own port without a token', async () => {
    const server = await startServer({
      env: { PORT: '0', DATA_DIR: dir, ROLE: 'worker', METRICS: 'true', METRICS_PORT: '0', LOG_LEVEL: 'silent' },
    });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const api = await fetch(`${server.url}/v1/forms`);
      expect(api.status).toBe(404);
      expect(((await api.json()) as any).error.message).toMatch(/ROLE=worker/);
      expect((await fetch(`${server.url}/s/f_x`, { method: 'POST' })).status).toBe(404);
      // METRICS_PORT set: not on the main port.
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
      expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const m = await fetch(`${server.metricsUrl}/metrics`);
      expect(m.status).toBe(200);
      expect(await m.text()).toContain('formsvc_worker_sends_in_flight 0');
    } finally {
      await server.stop();
    }
  });
});

describe('request id', () => {
  it('is kept in the submission meta and carried to the worker log line of each delivery it planned', async () => {
    const { log, lines } = capturingLogger('debug');
    const deps: Deps = { ...t.deps, log };
    const worker = new Worker(deps, { config: deps.config, mailer: deps.mailer, outbound: deps.outbound });
    await worker.start();
    try {
      const sub = await t.request('POST', `/s/${formId}`, {
        json: { a: 1 },
        headers: { 'x-request-id': 'req-fleet-42' },
      });
      expect(sub.headers.get('x-request-id')).toBe('req-fleet-42');
      const stored = await t.api('GET', `/v1/submissions/${sub.json.submission_id}`, key);
      expect(stored.json.meta?.request_id, `${sub.status} ${JSON.stringify(stored.json).slice(0, 300)}`).toBe(
        'req-fleet-42',
      );
      await hook.waitFor((r) => r.some((x) => x.json?.meta?.request_id === 'req-fleet-42'));
      const line = await until('the delivery log line', async () =>
        lines.find((l) => l.msg === 'delivery sent' && l.req_id === 'req-fleet-42'),
      );
      expect(line.delivery_id).toMatch(/^dl_/);
    } finally {
      await worker.stop(2000);
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('the fleet key fingerprint (PostgreSQL)', () => {
  it('refuses a node that would verify with another BILLING_WEBHOOK_SECRET while one with the first runs', async () => {
    const url = process.env.TEST_DATABASE_URL as string;
    const first = await holdKeyFingerprint(url, loadConfig({ BILLING_WEBHOOK_SECRET: 'whsec_one' }));
    try {
      const same = await holdKeyFingerprint(url, loadConfig({ BILLING_WEBHOOK_SECRET: 'whsec_one' }));
      await same();
      await expect(holdKeyFingerprint(url, loadConfig({ BILLING_WEBHOOK_SECRET: 'whsec_two' }))).rejects.toThrow(
        /^BILLING_WEBHOOK_SECRET differs from the one the running nodes of this database use/,
      );
    } finally {
      await first();
    }
    // With the first node gone, the new value starts cleanly.
    const next = await holdKeyFingerprint(url, loadConfig({ BILLING_WEBHOOK_SECRET: 'whsec_two' }));
    await next();
  });
});
