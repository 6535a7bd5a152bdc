import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Claimed, claim } from '../../server/worker/claim.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { deliveryRows, submitMany, tenant } from '../helpers/quota.js';

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
    // Oldest first; each claimed row carries its lease and its counted attempt.
    const ids = rows.filter((r) => r.destinationId === d1).map((r) => r.id);
    expect(first.map((c) => c.id)).toEqual(ids.slice(0, 5));
    for (const c of first) {
      expect(c.attempts).toBe(1);
      expect(c.lease_until.getTime()).toBe(base.now.getTime() + 60_000);
    }
    // A target not named gets perTarget.
    const second = mine(await claim(t.deps.database, 'delivery', { ...base, room: { [d1]: 5 } }));
    expect(second.map((c) => c.target_id).sort()).toEqual([d1, d2].sort());
  });
});
