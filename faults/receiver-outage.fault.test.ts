import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { pool, sleep } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, databaseAndMail, listAll, routeTo, serverProcess, tenant } from './helpers/service.js';

const SUBMISSIONS = 30;
/** Backoff base: attempt n waits 2^n × 25 ms ± 20 %, so the 10th (last) webhook attempt comes ~25 s after the first. */
const RETRY_BASE_MS = 25;
const UNAVAILABLE_MS = 3000;
const REFUSED_MS = 3000;
const WEBHOOK_MAX_ATTEMPTS = 10;

describe('a receiver that is down for a while', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('gets every delivery once it is back, and nothing is dead before its attempts run out', async () => {
    const { db, smtp } = await databaseAndMail(c, 'receiver');
    // First 503 to everything, then not listening at all (connection refused), then 200.
    const hook = await startFaultReceiver(() => ({ status: 503 }));
    c.add(() => hook.close());
    // A control receiver that never recovers: its deliveries must end dead, and only after the last attempt.
    const broken = await startFaultReceiver(() => ({ status: 503 }));
    c.add(() => broken.close());
    const server = await serverProcess(smtp, { DATABASE_URL: db.url, RETRY_BASE_MS: String(RETRY_BASE_MS) });
    c.add(() => server.stop());
    await server.start();
    const { key, formId, destinationIds } = await tenant(server.base, smtp, [hook.url]);
    const brokenDest = await routeTo(server.base, key, formId, broken.url, 'broken');

    const posted = await pool(SUBMISSIONS, 10, (i) => http(server.base, 'POST', `/s/${formId}`, undefined, { n: i }));
    expect(posted.map((p) => p.status)).toEqual(posted.map(() => 200));
    const started = Date.now();
    await sleep(UNAVAILABLE_MS);
    await hook.down();
    await sleep(REFUSED_MS);

    // Still down: every delivery has been tried and failed, and none is dead.
    const during = await listAll(server.base, key, `/v1/deliveries?destination_id=${destinationIds[0]}`);
    expect(during).toHaveLength(SUBMISSIONS);
    for (const d of during) {
      expect(['failed', 'sending', 'pending']).toContain(d.status);
      expect(d.attempts).toBeGreaterThanOrEqual(2);
      expect(d.attempts).toBeLessThan(WEBHOOK_MAX_ATTEMPTS);
    }
    expect(during.some((d) => /ECONNREFUSED|ECONNRESET|request failed/.test(d.last_error ?? ''))).toBe(true);
    expect(hook.hits.length).toBeGreaterThanOrEqual(SUBMISSIONS);
    expect(hook.hits.every((h) => h.status === 503 || h.status === null)).toBe(true);

    hook.set(() => ({ status: 200 }));
    await hook.up();
    const backAt = Date.now();
    await hook.waitForDistinct(SUBMISSIONS, 30_000);
    const arrivedMs = Date.now() - backAt;
    await until(
      'every delivery to the recovered receiver sent',
      async () => {
        const ds = await listAll(server.base, key, `/v1/deliveries?destination_id=${destinationIds[0]}`);
        return ds.every((d) => d.status === 'sent') && ds;
      },
      15_000,
    );
    const after = await listAll(server.base, key, `/v1/deliveries?destination_id=${destinationIds[0]}`);
    const accepted = hook.accepted();
    for (const d of after) {
      expect(d.attempts).toBeLessThanOrEqual(WEBHOOK_MAX_ATTEMPTS);
      expect(accepted.get(d.id), `delivery ${d.id} accepted once`).toHaveLength(1);
    }

    // The control destination: dead exactly when its attempts ran out, not before.
    const dead = await until(
      'every delivery to the broken receiver dead',
      async () => {
        const ds = await listAll(server.base, key, `/v1/deliveries?destination_id=${brokenDest}`);
        return ds.every((d) => d.status === 'dead') && ds;
      },
      60_000,
    );
    for (const d of dead) {
      expect(d.attempts).toBe(WEBHOOK_MAX_ATTEMPTS);
      expect(d.last_error).toMatch(/gave up after 10 attempts/);
      expect(broken.hits.filter((h) => h.id === d.id)).toHaveLength(WEBHOOK_MAX_ATTEMPTS);
    }
    console.log(
      `receiver outage: ${SUBMISSIONS} deliveries all arrived ${arrivedMs} ms after the receiver came back ` +
        `(${hook.hits.length} requests in all); the broken destination's died after ${Math.round((Date.now() - started) / 1000)} s`,
    );
  });
});
