import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { pool, type Reply, send } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, databaseAndMail, listAll, type ServerProcess, serverProcess, tenant } from './helpers/service.js';

const RATE_MAX = 8;
/** Phase 1: 40 addresses post 10 times each; 2 of every 10 are over the per-address limit. */
const P1_IPS = 40;
const P1_PER_IP = 10;
/** Phase 2: 25 new addresses post 8 times each (within the rate limit) across the quota's edge. */
const P2_IPS = 25;
const P2_PER_IP = RATE_MAX;
/** Every stored submission counts against the quota except over-quota ones (rate-limited ones too). */
const QUOTA = P1_IPS * P1_PER_IP + 100;
const CONCURRENCY = 20;

/** Round r posts once from every address; rounds alternate between the two processes. */
function burst(servers: ServerProcess[], formId: string, ips: number, perIp: number, net: string): Promise<Reply[]> {
  return pool(ips * perIp, CONCURRENCY, (i) =>
    send(`${servers[Math.floor(i / ips) % 2].base}/s/${formId}`, {
      json: { n: i },
      headers: { 'x-forwarded-for': `${net}.${(i % ips) + 1}` },
      timeoutMs: 15_000,
    }),
  );
}

const tally = <T>(xs: T[], key: (x: T) => string) => {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
};

describe('two server processes with workers on one PostgreSQL database', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('send each delivery once and enforce rate limits and the monthly quota together', async () => {
    const { db, smtp } = await databaseAndMail(c, 'two');
    const hook = await startFaultReceiver();
    c.add(() => hook.close());
    const env = {
      DATABASE_URL: db.url,
      WORKER: 'true',
      PLAN_LIMITS: JSON.stringify({ selfhost: { submissions_per_month: QUOTA } }),
    };
    const servers = [await serverProcess(smtp, env), await serverProcess(smtp, env)];
    for (const s of servers) c.add(() => s.stop());
    await Promise.all(servers.map((s) => s.start()));
    const [a, b] = servers;
    const { key, formId } = await tenant(a.base, smtp, [hook.url], { rate_limit: { max: RATE_MAX, window_s: 600 } });

    // Phase 1, under the quota: each address gets exactly RATE_MAX through, wherever it posts.
    const p1 = await burst(servers, formId, P1_IPS, P1_PER_IP, '203.0.113');
    const limited = P1_IPS * (P1_PER_IP - RATE_MAX);
    expect(tally(p1, (r) => `${r.status} ${r.body?.status ?? r.body?.error?.code}`)).toEqual({
      '200 received': P1_IPS * RATE_MAX,
      '429 rate_limited': limited,
    });

    // Phase 2, across the quota's edge: exactly the room left is received, the rest is over quota.
    const room = QUOTA - P1_IPS * P1_PER_IP;
    const p2 = await burst(servers, formId, P2_IPS, P2_PER_IP, '198.18.0');
    const over = P2_IPS * P2_PER_IP - room;
    expect(tally(p2, (r) => `${r.status} ${r.body?.status}`)).toEqual({
      '200 received': room,
      '200 quarantined': over,
    });

    // The stored rows say the same, read through the other process.
    const subs = await listAll(b.base, key, `/v1/forms/${formId}/submissions`);
    expect(tally(subs, (s) => s.quarantine_reason ?? s.status)).toEqual({
      received: P1_IPS * RATE_MAX + room,
      rate_limited: limited,
      over_quota: over,
    });
    expect((await http(b.base, 'GET', '/v1/me', key)).json.limits.used.submissions_this_month).toBe(QUOTA);

    // Each due delivery reaches the receiver exactly once, whichever worker took it.
    const due = P1_IPS * RATE_MAX + room;
    await hook.waitForDistinct(due, 60_000);
    const deliveries = await until(
      'every due delivery sent',
      async () => {
        const ds = await listAll(a.base, key, `/v1/deliveries?form_id=${formId}`);
        return ds.filter((d) => d.status === 'sent').length === due && ds;
      },
      30_000,
    );
    expect(tally(deliveries, (d) => d.status)).toEqual({ sent: due, skipped: limited, held: over });
    const accepted = hook.accepted();
    expect(hook.hits).toHaveLength(due);
    for (const d of deliveries.filter((x) => x.status === 'sent')) expect(accepted.get(d.id)).toHaveLength(1);
    console.log(
      `two processes: ${p1.length + p2.length} posts → ${due} received, ${limited} rate-limited, ${over} over quota; ` +
        `${hook.hits.length} webhook requests for ${accepted.size} deliveries`,
    );
  });
});
