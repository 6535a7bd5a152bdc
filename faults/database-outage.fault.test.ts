import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { pool, type Reply, send, sleep, submissionIdOf } from './helpers/load.js';
import { PG_ADMIN_URL } from './helpers/pg.js';
import { startTcpProxy } from './helpers/proxy.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, databaseAndMail, serverProcess, tenant } from './helpers/service.js';

const CLIENTS = 10;
const OUTAGE_MS = 5000;
/** No request may take longer than this, during the outage or not. */
const REQUEST_BOUND_MS = 8000;
/** After the database is back, new requests succeed within this. */
const RECOVERY_BOUND_MS = 8000;

interface Call {
  kind: 'intake' | 'api';
  reply: Reply;
}

/**
 * PostgreSQL becomes unreachable under load. The shared server cannot be restarted, so a TCP proxy
 * in this process stands between the server and PostgreSQL: it resets every connection and refuses
 * new ones for a while, then lets them through again.
 */
describe('PostgreSQL unreachable under load', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('answers 503 with the error envelope, never hangs, and recovers by itself', async () => {
    const { db, smtp } = await databaseAndMail(c, 'outage');
    const pg = new URL(PG_ADMIN_URL);
    const proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
    c.add(() => proxy.close());
    const hook = await startFaultReceiver();
    c.add(() => hook.close());
    const server = await serverProcess(smtp, {
      DATABASE_URL: db.via(proxy.port),
      WORKER_LEASE_MS: '3000',
      RETRY_BASE_MS: '100',
      // The outage makes every request and worker tick log; the assertions below say what matters.
      LOG_LEVEL: 'fatal',
    });
    c.add(() => server.stop());
    await server.start();
    const { key, formId } = await tenant(server.base, smtp, [hook.url]);

    const calls: Call[] = [];
    let stop = false;
    let n = 0;
    const load = pool(CLIENTS, CLIENTS, async (lane) => {
      for (let i = 0; !stop; i += 1) {
        const kind = (i + lane) % 2 === 0 ? 'intake' : 'api';
        const reply =
          kind === 'intake'
            ? await send(`${server.base}/s/${formId}`, { json: { n: n++ }, timeoutMs: 30_000 })
            : await send(`${server.base}/v1/forms/${formId}`, {
                headers: { authorization: `Bearer ${key}` },
                timeoutMs: 30_000,
              });
        calls.push({ kind, reply });
        await sleep(20);
      }
    });

    await sleep(2000);
    const cutAt = Date.now();
    await proxy.cut();
    const health: number[] = [];
    while (Date.now() - cutAt < OUTAGE_MS) {
      // /healthz is liveness (200 while the process runs); readiness says the database is gone.
      health.push((await send(`${server.base}/readyz`, { timeoutMs: 30_000 })).status);
      await sleep(500);
    }
    await proxy.restore();
    const restoredAt = Date.now();
    const recovered = await until(
      'a submission accepted after the outage',
      async () => {
        const r = await send(`${server.base}/s/${formId}`, { json: { probe: true }, timeoutMs: 30_000 });
        return r.status === 200 ? r : null;
      },
      RECOVERY_BOUND_MS + 10_000,
    );
    const recoveredAt = Date.now();
    const recoveryMs = recoveredAt - restoredAt;
    await sleep(4000);
    stop = true;
    await load;

    // Every request was answered, within the bound, with 200 or a 503 that carries the envelope.
    expect(server.alive()).toBe(true);
    const slowest = Math.max(...calls.map((x) => x.reply.ms));
    expect(calls.filter((x) => x.reply.status === 0).map((x) => x.reply.error)).toEqual([]);
    expect(slowest).toBeLessThanOrEqual(REQUEST_BOUND_MS);
    expect([...new Set(calls.map((x) => x.reply.status))].sort()).toEqual([200, 503]);
    const refused = calls.filter((x) => x.reply.status === 503);
    expect(new Set(refused.map((x) => x.kind))).toEqual(new Set(['intake', 'api']));
    for (const { reply } of refused) {
      expect(reply.body?.error?.code).toBe('service_unavailable');
      expect(reply.body.error.message).toEqual(expect.any(String));
      expect(reply.body.error.hint).toMatch(/\w/);
      expect(reply.retryAfter).toMatch(/^\d+$/);
      expect(reply.startedAt + reply.ms).toBeGreaterThanOrEqual(cutAt);
    }
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((s) => s === 503)).toBe(true);
    expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    // Once one submission went through again, every later request does.
    const late = calls.filter((x) => x.reply.startedAt >= recoveredAt);
    expect(late.length).toBeGreaterThan(0);
    expect(late.filter((x) => x.reply.status !== 200).map((x) => x.reply)).toEqual([]);
    expect((await http(server.base, 'GET', '/healthz')).status).toBe(200);
    expect((await http(server.base, 'GET', '/readyz')).status).toBe(200);

    // Every accepted submission (before, during the cut's edge and after) is stored and delivered.
    const accepted = [...calls.filter((x) => x.kind === 'intake').map((x) => x.reply), recovered].filter(
      (r) => r.status === 200,
    );
    const ids = accepted.map(submissionIdOf) as string[];
    const looked = await pool(ids.length, 10, (i) => http(server.base, 'GET', `/v1/submissions/${ids[i]}`, key));
    expect(looked.map((l) => l.status)).toEqual(ids.map(() => 200));
    // (A submission whose COMMIT went through as the connection was cut answered 503 and is delivered
    // too; nothing is asserted about those beyond the 503.)
    const delivered = () => new Set([...hook.accepted().values()].map((hits) => hits[0].body.submission.id));
    await until('every accepted submission delivered', async () => ids.every((id) => delivered().has(id)), 30_000);
    console.log(
      `database outage: ${calls.length} requests (${refused.length} answered 503), slowest ${slowest} ms, ` +
        `recovered ${recoveryMs} ms after the database came back, ${ids.length} submissions delivered`,
    );
  });
});
