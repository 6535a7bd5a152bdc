import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Claimed } from '../../server/db/rows.js';
import { claim, claimStatement } from '../../server/worker/claim.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { deliveryRows, submitMany, tenant } from '../helpers/quota.js';
import { orgIdOf } from '../helpers/seed.js';

let t: TestEnv;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('claiming deliveries per destination', () => {
  it('takes only the room a destination has left in this process', async () => {
    const a = await tenant(t, [{}, {}]);
    await submitMany(t, a.formId, 6);
    const rows = await deliveryRows(t, a.orgId);
    const [d1, d2] = [...new Set(rows.map((r) => r.destinationId))];
    const base = { now: new Date(Date.now() + 1000), limit: 100, perTarget: 4, leaseMs: 60_000 };
    // d1 already has 3 sends in flight here, d2 is at its limit: one more for d1, none for d2.
    const first = await claim(t.deps.database, 'delivery', { ...base, busy: [d2], inFlight: { [d1]: 3, [d2]: 4 } });
    expect(first.map((c) => c.target_id)).toEqual([d1]);
    // Nothing in flight: up to perTarget for each.
    const second = await claim(t.deps.database, 'delivery', { ...base, busy: [] });
    expect(second.filter((c) => c.target_id === d1)).toHaveLength(4);
    expect(second.filter((c) => c.target_id === d2)).toHaveLength(4);
  });

  it('takes exactly the room given per target, and nothing for a target without room', async () => {
    const a = await tenant(t, [{}, {}]);
    await submitMany(t, a.formId, 6);
    const rows = await deliveryRows(t, a.orgId);
    const [d1, d2] = [...new Set(rows.map((r) => r.destinationId))];
    const base = { now: new Date(Date.now() + 1000), limit: 100, perTarget: 1, busy: [], leaseMs: 60_000 };
    // (Rows of the other test's destinations are due too: only this tenant's are looked at.)
    const mine = (cs: Claimed[]) => cs.filter((c) => c.target_id === d1 || c.target_id === d2);
    const first = mine(await claim(t.deps.database, 'delivery', { ...base, room: { [d1]: 5, [d2]: 0 } }));
    expect(first.map((c) => c.target_id)).toEqual([d1, d1, d1, d1, d1]);
    // The oldest five (returned in no particular order); each carries its lease and its counted attempt.
    const ids = rows.filter((r) => r.destinationId === d1).map((r) => r.id);
    expect(first.map((c) => c.id).sort()).toEqual(ids.slice(0, 5).sort());
    for (const c of first) {
      expect(c.attempts).toBe(1);
      expect(c.lease_until.getTime()).toBe(base.now.getTime() + 60_000);
    }
    // A target not named gets perTarget.
    const second = mine(await claim(t.deps.database, 'delivery', { ...base, room: { [d1]: 5 } }));
    expect(second.map((c) => c.target_id).sort()).toEqual([d1, d2].sort());
  });
});

interface PlanNode {
  'Relation Name'?: string;
  Alias?: string;
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

describe('the claim plan', () => {
  // Statistics taken while the outbox was drained (the usual state), then a backlog arrives.
  let s: TestEnv;
  beforeAll(async () => {
    s = await startTestApp();
    const orgId = await orgIdOf(s, (await s.onboard()).key);
    // (Sent rows have no next attempt.)
    const insert = (status: string, n: number, tag: string) =>
      s.deps.database.rows(sql`
        insert into deliveries (id, org_id, route_id, destination_id, status, attempts, max_attempts, next_attempt_at, payload)
        select ${`dl_${tag}_`} || g, ${orgId}, 'rt_plan', 'ds_plan_' || (g % 4), ${status}, 0, 10,
          case when ${status} = 'sent' then null else now() end, '{}'::jsonb
        from generate_series(1, ${n}) g`);
    await insert('sent', 3000, 'old');
    await insert('pending', 300, 'few');
    await s.deps.database.prepared('analyze deliveries', []);
    await insert('pending', 3000, 'new');
  });
  afterAll(() => s.close());

  const planOf = (rows: Record<string, unknown>[]) => {
    const json = Object.values(rows[0])[0];
    return ((typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: PlanNode }])[0].Plan;
  };

  it('locks its candidates by primary key even when statistics say pending rows are rare', async () => {
    const now = new Date().toISOString();
    const Plan = planOf(
      await s.deps.database.prepared<Record<string, unknown>>(`explain (format json) ${claimStatement('delivery')}`, [
        now,
        now,
        '64',
        '256',
        '16',
        '[]',
        '[]',
      ]),
    );
    // The rows to lock (alias d) are read by primary key, never through the due index: an index
    // scan of the key, or a bitmap heap scan (PGlite's choice) over a bitmap of the key alone.
    const reads = nodesOf(Plan).filter((n) => n['Relation Name'] === 'deliveries' && n.Alias === 'd');
    expect(reads.length).toBeGreaterThan(0);
    for (const n of reads) {
      if (n['Node Type'] === 'Bitmap Heap Scan') {
        const indexes = nodesOf(n).filter((x) => x['Node Type'] === 'Bitmap Index Scan');
        expect(indexes.map((x) => x['Index Name'])).toEqual(['deliveries_pkey']);
      } else {
        expect(n).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': 'deliveries_pkey' });
      }
    }
  });

  it('reads its candidates in due order and stops at the window, whatever the statistics say', async () => {
    // The candidate function's body, planned under the function's own settings. (Without them, these
    // statistics make both drivers read every due row through a bitmap and sort them.)
    const [fn] = await s.deps.database.rows<{ src: string; config: string[] | null }>(
      sql`select prosrc as src, proconfig as config from pg_proc where proname = 'claim_candidates_deliveries'`,
    );
    expect(fn.config).toEqual([
      'enable_bitmapscan=off',
      'enable_seqscan=off',
      'enable_sort=off',
      'max_parallel_workers_per_gather=0',
    ]);
    const body = fn.src.replaceAll('p_now', 'now()').replaceAll('p_window', '256').replaceAll('p_skip', "'{}'::text[]");
    const Plan = await s.deps.database.db.transaction(async (tx) => {
      for (const setting of fn.config ?? []) {
        const [name, value] = setting.split('=');
        await tx.execute(sql`select set_config(${name}, ${value}, true)`);
      }
      const result = (await tx.execute(sql.raw(`explain (format json) ${body}`))) as unknown;
      // postgres.js answers the rows, PGlite an object holding them
      return planOf(
        (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Record<string, unknown>[],
      );
    });
    const nodes = nodesOf(Plan);
    const scans = nodes.filter((n) => n['Relation Name'] === 'deliveries');
    expect(scans).toHaveLength(3);
    // Each branch walks the due index in order under its limit: no bitmap of every due row, no sort.
    for (const n of scans) expect(n).toMatchObject({ 'Node Type': 'Index Scan', 'Index Name': 'deliveries_due' });
    expect(nodes.filter((n) => /Bitmap|Sort|Seq Scan|Gather/.test(n['Node Type']))).toEqual([]);
    expect(nodes.filter((n) => n['Node Type'] === 'Limit')).toHaveLength(3);
  });
});
