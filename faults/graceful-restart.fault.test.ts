import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { privateCluster } from './helpers/cluster.js';
import { pool, send } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, serverProcess, tenant } from './helpers/service.js';

const TOTAL = 64;
/**
 * Workers that wake only by NOTIFY (their tick and the lease are a minute long): a row handed back
 * on SIGTERM reaches a peer within the bound only because the hand-back clears its lease and wakes
 * the others, not because a lease ran out or a tick came.
 */
const WORKER_ENV = {
  ROLE: 'worker',
  WORKER_TICK_MS: '60000',
  WORKER_LEASE_MS: '60000',
  SHUTDOWN_GRACE_MS: '1500',
};

describe('SIGTERM of a worker node with deliveries in hand', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('exits 0 and its held rows are sent by a peer within 2 s', async () => {
    const pg = await privateCluster();
    c.add(() => pg.destroy());
    const smtp = await startSmtpSink();
    c.add(() => smtp.close());
    const hook = await startFaultReceiver(() => ({ status: 200, delayMs: 1000 }));
    c.add(() => hook.close());
    const api = await serverProcess(smtp, { DATABASE_URL: pg.url, ROLE: 'api' });
    // w1 sends slowly (4 at a time) and so holds most rows queued; w2 has room for them all.
    const w1 = await serverProcess(smtp, { DATABASE_URL: pg.url, ...WORKER_ENV, WORKER_PER_DESTINATION: '4' });
    const w2 = await serverProcess(smtp, {
      DATABASE_URL: pg.url,
      ...WORKER_ENV,
      WORKER_PER_DESTINATION: '64',
      WORKER_CONCURRENCY: '64',
    });
    for (const s of [api, w1, w2]) c.add(() => s.stop());
    await Promise.all([api.start(), w1.start()]);
    const { key, formId } = await tenant(api.base, smtp, [hook.url]);

    const posted = await pool(TOTAL, 8, (i) => send(`${api.base}/s/${formId}`, { json: { n: i }, timeoutMs: 15_000 }));
    expect(posted.map((r) => r.status)).toEqual(posted.map(() => 200));
    await hook.waitForHits(6, 30_000);
    // w1 claimed the rows (its queue grows once it knows the receiver's latency); w2 starts now and
    // finds nothing due: it sleeps until woken (its tick is a minute).
    await w2.start();
    const before = hook.hits.length;
    expect(before).toBeLessThan(TOTAL / 2);

    const exit = await w1.signal('SIGTERM');
    expect(exit.code).toBe(0);

    await hook.waitForDistinct(TOTAL, 20_000);
    const lastArrival = Math.max(...[...hook.accepted().values()].map((hits) => hits[0].receivedAt));
    expect(lastArrival - exit.at).toBeLessThanOrEqual(2000);
    // Nothing is left held: every row ends sent (recorded by w2 just after its answer).
    await until(
      'every delivery recorded sent',
      async () => {
        for (const status of ['sending', 'pending', 'failed']) {
          const page = await http(api.base, 'GET', `/v1/deliveries?form_id=${formId}&status=${status}&limit=1`, key);
          if (page.json.data.length) return false;
        }
        return true;
      },
      10_000,
    );
    console.log(
      `graceful restart: ${TOTAL} deliveries, the last ${lastArrival - exit.at} ms after the SIGTERMed node exited`,
    );
  });
});
