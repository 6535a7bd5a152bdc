import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { privateCluster } from './helpers/cluster.js';
import { pool, type Reply, send, sleep, submissionIdOf } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, serverProcess, tenant } from './helpers/service.js';

const CLIENTS = 8;
const DOWN_MS = 4000;

/**
 * PostgreSQL itself dies (pg_ctl stop -m immediate: every backend gone, no checkpoint) under load
 * and comes back: the server is not restarted.
 */
describe('PostgreSQL killed mid-load and started again', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('answers 503 with Retry-After in the gap, never 200 for what was not stored, and is ready within 5 s', async () => {
    const pg = await privateCluster();
    c.add(() => pg.destroy());
    const smtp = await startSmtpSink();
    c.add(() => smtp.close());
    const hook = await startFaultReceiver();
    c.add(() => hook.close());
    const server = await serverProcess(smtp, {
      DATABASE_URL: pg.url,
      WORKER_LEASE_MS: '3000',
      RETRY_BASE_MS: '100',
      LOG_LEVEL: 'fatal',
    });
    c.add(() => server.stop());
    await server.start();
    const { key, formId } = await tenant(server.base, smtp, [hook.url]);

    const replies: Reply[] = [];
    let stop = false;
    let n = 0;
    const load = pool(CLIENTS, CLIENTS, async () => {
      while (!stop) {
        replies.push(await send(`${server.base}/s/${formId}`, { json: { n: n++ }, timeoutMs: 30_000 }));
        await sleep(20);
      }
    });
    await sleep(1500);
    const killedAt = Date.now();
    pg.kill();
    await sleep(DOWN_MS);
    const inGap = replies.filter((r) => r.startedAt > killedAt + 500 && r.startedAt + r.ms < Date.now());
    pg.start();
    const startedAt = Date.now();
    const readyAt = await until(
      'readyz 200',
      async () => ((await send(`${server.base}/readyz`, { timeoutMs: 5000 })).status === 200 ? Date.now() : null),
      30_000,
    );
    await sleep(1500);
    stop = true;
    await load;

    expect(server.alive()).toBe(true);
    expect(inGap.length).toBeGreaterThan(0);
    for (const r of inGap) {
      expect(r.status).toBe(503);
      expect(r.body?.error?.code).toBe('service_unavailable');
      expect(r.retryAfter).toMatch(/^\d+$/);
    }
    expect(readyAt - startedAt).toBeLessThanOrEqual(5000);

    // Every 200 is a stored submission, and each is delivered.
    const ids = replies.filter((r) => r.status === 200).map(submissionIdOf) as string[];
    expect(ids.length).toBeGreaterThan(0);
    const looked = await pool(ids.length, 8, (i) => http(server.base, 'GET', `/v1/submissions/${ids[i]}`, key));
    expect(looked.map((l) => l.status)).toEqual(ids.map(() => 200));
    const delivered = () => new Set([...hook.accepted().values()].map((hits) => hits[0].body.submission.id));
    await until('every acked submission delivered', async () => ids.every((id) => delivered().has(id)), 60_000);
    console.log(
      `postgres killed: ${replies.length} posts, ${inGap.length} in the gap (all 503), ready ${readyAt - startedAt} ms after the database started, ${ids.length} acked and delivered`,
    );
  });
});
