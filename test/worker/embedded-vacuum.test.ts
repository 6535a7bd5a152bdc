import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vacuumEmbedded } from '../../server/worker/embedded-vacuum.js';
import { runHousekeeping } from '../../server/worker/housekeeping.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { orgIdOf } from '../helpers/seed.js';

let t: TestEnv;
let orgId: string;

beforeAll(async () => {
  t = await startTestApp();
  orgId = await orgIdOf(t, (await t.onboard()).key);
});
afterAll(() => t.close());

interface Stats {
  dead: number;
  live: number;
  last_vacuum: Date | null;
  last_analyze: Date | null;
}

async function stats(table: string): Promise<Stats> {
  const [row] = await t.deps.database.rows<Stats>(
    sql`select n_dead_tup::int as dead, n_live_tup::int as live, last_vacuum, last_analyze
        from pg_stat_user_tables where relname = ${table}`,
  );
  return row;
}

/** 1,500 deliveries taken through pending → sending → sent, as the worker does: 3,000 dead row versions. */
async function deliverMany() {
  await t.deps.database.rows(sql`
    insert into deliveries (id, org_id, route_id, destination_id, status, attempts, max_attempts, next_attempt_at, payload)
    select 'dl_vacuum_' || g, ${orgId}, 'rt_vacuum', 'ds_vacuum', 'pending', 0, 10, now(), '{}'::jsonb
    from generate_series(1, 1500) g`);
  await t.deps.database.rows(sql`update deliveries set status = 'sending' where route_id = 'rt_vacuum'`);
  await t.deps.database.rows(sql`update deliveries set status = 'sent', sent_at = now() where route_id = 'rt_vacuum'`);
}

describe('embedded vacuum', () => {
  it('vacuums the tables with many dead rows on PGlite, and leaves PostgreSQL to autovacuum', async () => {
    await deliverMany();
    if (t.deps.database.kind === 'postgres') {
      expect(await vacuumEmbedded(t.deps)).toEqual({ vacuumed: [], analyzed: [] });
      return;
    }
    const report = await vacuumEmbedded(t.deps);
    expect(report.vacuumed).toContain('deliveries');
    // a table barely touched since the migrations is left alone
    expect([...report.vacuumed, ...report.analyzed]).not.toContain('streams');
    const after = await stats('deliveries');
    expect(after.last_vacuum).not.toBeNull();
    expect(after.last_analyze).not.toBeNull();
    await t.deps.database.prepared('select pg_stat_force_next_flush()', []);
    expect((await stats('deliveries')).dead).toBe(0);
    // Nothing changed since: the next run has nothing to do for it.
    expect((await vacuumEmbedded(t.deps)).vacuumed).not.toContain('deliveries');
  });

  it('runs as the last housekeeping job', async () => {
    const report = await runHousekeeping(t.deps);
    expect(Object.keys(report).at(-1)).toBe('embedded-vacuum');
    expect(report['embedded-vacuum']).toMatchObject({ ok: true });
  });
});
