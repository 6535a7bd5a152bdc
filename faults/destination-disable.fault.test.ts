import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { pool, sleep } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, databaseAndMail, listAll, serverProcess, tenant } from './helpers/service.js';

const SUBMISSIONS = 20;
const LATER = 10;
/** Backoff base: the 10th (last) webhook attempt comes ~25 s after the first, far after the disable. */
const RETRY_BASE_MS = 25;
const DISABLE_AFTER_S = 2;
const WEBHOOK_MAX_ATTEMPTS = 10;

describe('a receiver down for longer than DESTINATION_DISABLE_AFTER_S', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('disables the destination, stops attempting, and after re-enabling every submission arrives once', async () => {
    const { db, smtp } = await databaseAndMail(c, 'disable');
    // 503 first, then not listening at all (connection refused).
    const hook = await startFaultReceiver(() => ({ status: 503 }));
    c.add(() => hook.close());
    const server = await serverProcess(smtp, {
      DATABASE_URL: db.url,
      RETRY_BASE_MS: String(RETRY_BASE_MS),
      DESTINATION_DISABLE_AFTER_S: String(DISABLE_AFTER_S),
    });
    c.add(() => server.stop());
    await server.start();
    const { key, formId, destinationIds } = await tenant(server.base, smtp, [hook.url]);
    const destId = destinationIds[0];
    const destination = async () => (await http(server.base, 'GET', `/v1/destinations/${destId}`, key)).json;

    const posted = await pool(SUBMISSIONS, 10, (i) => http(server.base, 'POST', `/s/${formId}`, undefined, { n: i }));
    expect(posted.map((p) => p.status)).toEqual(posted.map(() => 200));
    await sleep(1000);
    await hook.down();

    const off = await until(
      'destination disabled',
      async () => {
        const d = await destination();
        return d.enabled === false && d;
      },
      20_000,
    );
    expect(off.disabled_reason).toMatch(/^failing since /);
    const events = await http(server.base, 'GET', '/v1/events?type=destination.disabled', key);
    expect(events.json.data.map((e: { subject: { destination_id: string } }) => e.subject.destination_id)).toContain(
      destId,
    );

    // Submissions made while it is off wait too.
    const later = await pool(LATER, 5, (i) => http(server.base, 'POST', `/s/${formId}`, undefined, { n: 100 + i }));
    expect(later.map((p) => p.status)).toEqual(later.map(() => 200));
    const waiting = await until(
      'every delivery waiting',
      async () => {
        const ds = await listAll(server.base, key, `/v1/deliveries?destination_id=${destId}`);
        return ds.length === SUBMISSIONS + LATER && ds.every((d) => d.status === 'pending') && ds;
      },
      10_000,
    );
    for (const d of waiting) {
      expect(d.next_attempt_at).toBeNull();
      expect(d.attempts).toBeLessThan(WEBHOOK_MAX_ATTEMPTS);
    }
    // Nothing is attempted while it is off: the receiver comes back, and still hears nothing.
    hook.set(() => ({ status: 200 }));
    await hook.up();
    const hitsWhileOff = hook.hits.length;
    await sleep(1500);
    expect(hook.hits.length).toBe(hitsWhileOff);
    const attemptsWhileOff = (await listAll(server.base, key, `/v1/deliveries?destination_id=${destId}`)).map(
      (d) => d.attempts,
    );
    expect(attemptsWhileOff.sort()).toEqual(waiting.map((d) => d.attempts).sort());

    const on = await http(server.base, 'PATCH', `/v1/destinations/${destId}`, key, { enabled: true });
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    const backAt = Date.now();
    await hook.waitForDistinct(SUBMISSIONS + LATER, 30_000);
    const sent = await until(
      'every delivery sent',
      async () => {
        const ds = await listAll(server.base, key, `/v1/deliveries?destination_id=${destId}`);
        return ds.every((d) => d.status === 'sent') && ds;
      },
      15_000,
    );
    expect(sent).toHaveLength(SUBMISSIONS + LATER);
    const accepted = hook.accepted();
    for (const d of sent) expect(accepted.get(d.id), `delivery ${d.id} accepted once`).toHaveLength(1);
    expect((await destination()).failing_since).toBeNull();
    console.log(
      `destination disable: off after ${DISABLE_AFTER_S} s of failures (${hitsWhileOff} requests), ` +
        `${SUBMISSIONS + LATER} deliveries all arrived ${Date.now() - backAt} ms after re-enabling`,
    );
  });
});
