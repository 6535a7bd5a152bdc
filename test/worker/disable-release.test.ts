import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { routes } from '../../server/db/schema.js';
import { runHousekeeping } from '../../server/worker/housekeeping.js';
import type { TestEnv } from '../helpers/app.js';
import { deliveryRows, MID_MONTH, quotaApp, setPlan, submitMany, tenant } from '../helpers/quota.js';

let t: TestEnv | null = null;
afterAll(async () => {
  await t?.close();
});

describe('a disabled destination and over-quota deliveries', () => {
  it('releases held deliveries of a disabled destination as waiting (not due), and enabling makes them due', async () => {
    const q = await quotaApp(1);
    t = q.t;
    const a = await tenant(q.t, [{}]);
    const [route] = await q.t.deps.database.db.select().from(routes).where(eq(routes.id, a.routeIds[0]));
    const off = await q.t.api('PATCH', `/v1/destinations/${route.destinationId}`, a.key, { json: { enabled: false } });
    expect(off.json.enabled).toBe(false);
    await submitMany(q.t, a.formId, 3); // one within the quota (waiting), two over it (held)
    expect((await deliveryRows(q.t, a.orgId)).map((d) => d.status).sort()).toEqual(['held', 'held', 'pending']);
    await setPlan(q.t, a.orgId, 'pro');
    await runHousekeeping(q.t.deps);
    const released = await deliveryRows(q.t, a.orgId);
    for (const d of released) expect(d).toMatchObject({ status: 'pending', nextAttemptAt: null });
    await q.t.api('PATCH', `/v1/destinations/${route.destinationId}`, a.key, { json: { enabled: true } });
    for (const d of await deliveryRows(q.t, a.orgId)) {
      expect(d.status).toBe('pending');
      expect(d.nextAttemptAt?.toISOString()).toBe(MID_MONTH.toISOString());
    }
  });
});
