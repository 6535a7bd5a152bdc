import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submissions } from '../../server/db/schema.js';
import { runHousekeeping } from '../../server/worker/housekeeping.js';
import type { TestEnv } from '../helpers/app.js';
import { MID_MONTH, quotaApp, setPlan, tenant } from '../helpers/quota.js';
import { createForm, seedAttachment, seedSubmission } from '../helpers/seed.js';

const DAY = 86_400_000;
const ago = (days: number) => new Date(MID_MONTH.getTime() - days * DAY);

let t: TestEnv;
beforeAll(async () => {
  t = (await quotaApp(1000)).t; // the free plan keeps 30 days
});
afterAll(() => t.close());

const exists = async (id: string) =>
  (await t.deps.database.db.select({ id: submissions.id }).from(submissions).where(eq(submissions.id, id))).length ===
  1;

async function setRetention(key: string, formId: string, days: unknown) {
  return t.api('PATCH', `/v1/forms/${formId}`, key, { json: { settings: { retention_days: days } } });
}

describe('settings.retention_days', () => {
  it('deletes a form’s submissions by the shorter of its own retention and the plan’s', async () => {
    const free = await tenant(t, []);
    const short = free.formId;
    const long = await createForm(t, free.key);
    const plain = await createForm(t, free.key);
    expect((await setRetention(free.key, short, 7)).status).toBe(200);
    expect((await setRetention(free.key, long, 90)).status).toBe(200);
    const seed = async (formId: string, days: number) =>
      seedSubmission(t, { orgId: free.orgId, formId, receivedAt: ago(days) });
    const rows = {
      shortOld: await seed(short, 8),
      shortYoung: await seed(short, 6),
      longPastPlan: await seed(long, 40),
      longYoung: await seed(long, 20),
      plainYoung: await seed(plain, 20),
    };
    const file = await seedAttachment(t, { orgId: free.orgId, formId: short, submissionId: rows.shortOld.id });

    // An organization whose plan keeps forever: the form's retention alone decides.
    const self = await tenant(t, []);
    await setPlan(t, self.orgId, 'selfhost');
    expect((await setRetention(self.key, self.formId, 10)).status).toBe(200);
    const selfOld = await seedSubmission(t, { orgId: self.orgId, formId: self.formId, receivedAt: ago(11) });
    const selfYoung = await seedSubmission(t, { orgId: self.orgId, formId: self.formId, receivedAt: ago(9) });

    const report = await runHousekeeping(t.deps);
    expect(report.retention).toMatchObject({ ok: true, result: { submissions: 3, attachments: 1 } });
    expect(await exists(rows.shortOld.id)).toBe(false);
    expect(await exists(rows.longPastPlan.id)).toBe(false);
    expect(await exists(selfOld.id)).toBe(false);
    for (const kept of [rows.shortYoung, rows.longYoung, rows.plainYoung, selfYoung]) {
      expect(await exists(kept.id)).toBe(true);
    }
    const gone = await new Promise<boolean>((resolve) => {
      const s = t.deps.storage.read(file.storageKey);
      s.on('error', () => resolve(true));
      s.on('readable', () => {
        s.destroy();
        resolve(false);
      });
    });
    expect(gone).toBe(true);

    // null removes the setting: the plan's retention alone applies again.
    expect((await setRetention(free.key, short, null)).status).toBe(200);
    const r = await t.api('GET', `/v1/forms/${short}`, free.key);
    expect(r.json.settings.retention_days).toBeUndefined();
  });

  it('answers 422 for a retention that is not a whole number of days', async () => {
    const { key, formId } = await tenant(t, []);
    for (const days of [0, -1, 1.5, '7']) {
      const r = await setRetention(key, formId, days);
      expect(r.status, String(days)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });
});
