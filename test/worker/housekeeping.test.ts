import { eq, inArray } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { attachments, deliveries, submissions } from '../../server/db/schema.js';
import { addHousekeepingJob, housekeepingJobs, runHousekeeping } from '../../server/worker/housekeeping.js';
import type { TestEnv } from '../helpers/app.js';
import {
  deliveryRows,
  MID_MONTH,
  quotaApp,
  setPlan,
  statusesOf,
  submitMany,
  tenant,
  usedThisMonth,
} from '../helpers/quota.js';
import { startReceiver } from '../helpers/receiver.js';
import { seedAttachment, seedDelivery, seedSubmission } from '../helpers/seed.js';

const DAY = 86_400_000;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function app(limit: number, env: Record<string, string> = {}) {
  const q = await quotaApp(limit, env);
  closers.push(() => q.t.close());
  return q;
}

/** What the release job reported in one run. */
async function release(t: TestEnv) {
  const report = await runHousekeeping(t.deps);
  expect(report['quota-release']).toMatchObject({ ok: true });
  return (report['quota-release'] as { result: { submissions: number; deliveries: number } }).result;
}

/** The submission ids whose deliveries are all `status` (each submission has the same routes). */
async function submissionsWith(t: TestEnv, orgId: string, status: string) {
  const rows = await deliveryRows(t, orgId);
  return [...new Set(rows.filter((d) => d.status === status).map((d) => d.submissionId))];
}

describe('releasing held deliveries', () => {
  it('releases nothing while the plan does not allow, then everything when the plan rises; other tenants stay held', async () => {
    const { t } = await app(2);
    const a = await tenant(t);
    const b = await tenant(t);
    for (const x of [a, b]) await submitMany(t, x.formId, 5);
    expect(await release(t)).toEqual({ submissions: 0, deliveries: 0 });
    expect(await submissionsWith(t, a.orgId, 'held')).toHaveLength(3);

    await setPlan(t, a.orgId, 'pro');
    const wakes = t.wakes;
    expect(await release(t)).toEqual({ submissions: 3, deliveries: 6 });
    expect(t.wakes).toBeGreaterThan(wakes);
    const rows = (await deliveryRows(t, a.orgId)).filter((d) => d.releasedAt);
    expect(rows).toHaveLength(6);
    for (const d of rows) {
      expect(d).toMatchObject({ status: 'pending', attempts: 0 });
      expect(d.nextAttemptAt?.toISOString()).toBe(MID_MONTH.toISOString());
    }
    expect(await submissionsWith(t, a.orgId, 'held')).toHaveLength(0);
    expect(await usedThisMonth(t, a.key)).toBe(5);
    // b is still on free and over quota: untouched.
    expect(await submissionsWith(t, b.orgId, 'held')).toHaveLength(3);
    expect(await usedThisMonth(t, b.key)).toBe(2);
    // A second run has nothing left to release.
    expect(await release(t)).toEqual({ submissions: 0, deliveries: 0 });
  });

  it('releases at most the remaining allowance, oldest first; the next month releases the rest', async () => {
    const { t, clock } = await app(2);
    const a = await tenant(t);
    const sent = await submitMany(t, a.formId, 5);
    const held = sent.slice(2).map((s) => s.id);
    // A larger PLAN_LIMITS (read once at start, so: a restart with a new setting).
    t.deps.config.planLimits.free.submissions_per_month = 4;
    expect(await release(t)).toEqual({ submissions: 2, deliveries: 4 });
    expect(await statusesOf(t, a.orgId, held[0])).toEqual(['pending', 'pending']);
    expect(await statusesOf(t, a.orgId, held[1])).toEqual(['pending', 'pending']);
    expect(await statusesOf(t, a.orgId, held[2])).toEqual(['held', 'held']);
    expect(await usedThisMonth(t, a.key)).toBe(4);
    // The allowance is spent: a new submission is over quota too.
    const [late] = await submitMany(t, a.formId, 1);
    expect(late.status).toBe('quarantined');
    expect(await release(t)).toEqual({ submissions: 0, deliveries: 0 });

    // Month rolls over: the backlog (2 submissions) fits in the new month's 4.
    clock.now = new Date(Date.UTC(2031, 3, 1, 0, 0, 5));
    expect(await usedThisMonth(t, a.key)).toBe(0);
    expect(await release(t)).toEqual({ submissions: 2, deliveries: 4 });
    expect(await statusesOf(t, a.orgId, held[2])).toEqual(['pending', 'pending']);
    expect(await statusesOf(t, a.orgId, late.id)).toEqual(['pending', 'pending']);
    // Released in April: they count in April (each once, whatever its number of deliveries).
    expect(await usedThisMonth(t, a.key)).toBe(2);
    expect((await submitMany(t, a.formId, 3)).map((s) => s.status)).toEqual(['received', 'received', 'quarantined']);
  });

  it('never releases more than the allowance when several runs race', async () => {
    const { t } = await app(2);
    const a = await tenant(t, [{}]);
    await submitMany(t, a.formId, 8);
    t.deps.config.planLimits.free.submissions_per_month = 5;
    const runs = await Promise.all([release(t), release(t), release(t), release(t)]);
    expect(runs.reduce((n, r) => n + r.submissions, 0)).toBe(3);
    expect(await submissionsWith(t, a.orgId, 'pending')).toHaveLength(2 + 3);
    expect(await submissionsWith(t, a.orgId, 'held')).toHaveLength(3);
    expect(await usedThisMonth(t, a.key)).toBe(5);
  });

  it('wakes the worker, which sends a released delivery', async () => {
    const receiver = await startReceiver();
    closers.push(receiver.close);
    const { t } = await app(1);
    const a = await tenant(t, [{ url: receiver.url }]);
    const [, over] = await submitMany(t, a.formId, 2, { hello: 'world' });
    await t.startWorker();
    await receiver.waitFor((r) => r.length === 1);
    expect(await statusesOf(t, a.orgId, over.id)).toEqual(['held']);
    await setPlan(t, a.orgId, 'pro');
    await runHousekeeping(t.deps);
    const got = await receiver.waitFor((r) => r.some((x) => x.json?.submission?.id === over.id));
    expect(got.find((x) => x.json?.submission?.id === over.id)?.json.data).toEqual({ n: 1, hello: 'world' });
  });
});

describe('retention', () => {
  const ago = (days: number) => new Date(MID_MONTH.getTime() - days * DAY);

  async function seeded(t: TestEnv, orgId: string, formId: string, days: number, statuses: string[]) {
    const s = await seedSubmission(t, { orgId, formId, receivedAt: ago(days) });
    for (const status of statuses) {
      await seedDelivery(t, {
        orgId,
        submissionId: s.id,
        formId,
        status: status as 'sent',
        nextAttemptAt: ['pending', 'failed'].includes(status) ? ago(days) : null,
      });
    }
    const file = await seedAttachment(t, { orgId, formId, submissionId: s.id });
    return { id: s.id, file };
  }

  const exists = async (t: TestEnv, id: string) =>
    (await t.deps.database.db.select({ id: submissions.id }).from(submissions).where(eq(submissions.id, id))).length ===
    1;
  const fileExists = (t: TestEnv, key: string) =>
    new Promise<boolean>((resolve) => {
      const s = t.deps.storage.read(key);
      s.on('error', () => resolve(false));
      s.on('readable', () => {
        s.destroy();
        resolve(true);
      });
    });

  it('deletes old submissions with their attachments, files and finished deliveries; keeps unfinished and recent ones', async () => {
    const { t } = await app(1000);
    const a = await tenant(t, []); // free: 30 days
    const done = await seeded(t, a.orgId, a.formId, 40, ['sent', 'dead', 'skipped']);
    const bare = await seeded(t, a.orgId, a.formId, 31, []);
    const busy = await Promise.all(
      ['pending', 'failed', 'sending', 'held'].map((st) => seeded(t, a.orgId, a.formId, 40, ['sent', st])),
    );
    const recent = await seeded(t, a.orgId, a.formId, 29, ['sent']);
    // A digest delivery (no submission of its own) past retention, and a recent one.
    const oldDigest = await seedDelivery(t, {
      orgId: a.orgId,
      submissionId: null,
      status: 'sent',
      nextAttemptAt: null,
    });
    const newDigest = await seedDelivery(t, {
      orgId: a.orgId,
      submissionId: null,
      status: 'sent',
      nextAttemptAt: null,
    });
    await t.deps.database.db
      .update(deliveries)
      .set({ createdAt: ago(45) })
      .where(eq(deliveries.id, oldDigest.id));
    await t.deps.database.db
      .update(deliveries)
      .set({ createdAt: ago(5) })
      .where(eq(deliveries.id, newDigest.id));

    const report = await runHousekeeping(t.deps);
    expect(report.retention).toEqual({ ok: true, result: { submissions: 2, attachments: 2, deliveries: 4 } });
    for (const gone of [done, bare]) {
      expect(await exists(t, gone.id)).toBe(false);
      expect(await fileExists(t, gone.file.storageKey)).toBe(false);
      expect((await t.api('GET', `/v1/submissions/${gone.id}`, a.key)).status).toBe(404);
    }
    expect(await t.deps.database.db.select().from(deliveries).where(eq(deliveries.submissionId, done.id))).toEqual([]);
    const left = await t.deps.database.db
      .select({ id: attachments.id })
      .from(attachments)
      .where(inArray(attachments.submissionId, [done.id, bare.id]));
    expect(left).toEqual([]);
    for (const kept of [...busy, recent]) {
      expect(await exists(t, kept.id)).toBe(true);
      expect(await fileExists(t, kept.file.storageKey)).toBe(true);
    }
    expect(await statusesOf(t, a.orgId, busy[0].id)).toEqual(['pending', 'sent']);
    const digests = await t.deps.database.db
      .select({ id: deliveries.id })
      .from(deliveries)
      .where(inArray(deliveries.id, [oldDigest.id, newDigest.id]));
    expect(digests.map((d) => d.id)).toEqual([newDigest.id]);

    // Once the pending delivery is over, its submission goes on the next run.
    await t.deps.database.db.update(deliveries).set({ status: 'sent' }).where(eq(deliveries.submissionId, busy[0].id));
    const again = await runHousekeeping(t.deps);
    expect(again.retention).toEqual({ ok: true, result: { submissions: 1, attachments: 1, deliveries: 2 } });
    expect(await exists(t, busy[0].id)).toBe(false);
  });

  it('follows each organization’s effective plan: unlimited keeps everything, an expired plan falls back to free', async () => {
    const { t } = await app(1000);
    const free = await tenant(t, []);
    const self = await tenant(t, []);
    const pro = await tenant(t, []);
    const expired = await tenant(t, []);
    await setPlan(t, self.orgId, 'selfhost'); // retention_days null
    await setPlan(t, pro.orgId, 'pro', new Date(MID_MONTH.getTime() + DAY)); // 365 days, still valid
    await setPlan(t, expired.orgId, 'pro', new Date(MID_MONTH.getTime() - DAY)); // expired → free, 30 days
    const rows = {
      free: await seeded(t, free.orgId, free.formId, 60, ['sent']),
      self: await seeded(t, self.orgId, self.formId, 4000, ['sent']),
      pro: await seeded(t, pro.orgId, pro.formId, 60, ['sent']),
      proOld: await seeded(t, pro.orgId, pro.formId, 400, ['dead']),
      expired: await seeded(t, expired.orgId, expired.formId, 60, ['sent']),
    };
    const report = await runHousekeeping(t.deps);
    expect(report.retention).toMatchObject({ ok: true, result: { submissions: 3 } });
    expect(await exists(t, rows.free.id)).toBe(false);
    expect(await exists(t, rows.self.id)).toBe(true);
    expect(await fileExists(t, rows.self.file.storageKey)).toBe(true);
    expect(await exists(t, rows.pro.id)).toBe(true);
    expect(await exists(t, rows.proOld.id)).toBe(false);
    expect(await exists(t, rows.expired.id)).toBe(false);
    // The plan's number comes from PLAN_LIMITS like every other limit.
    t.deps.config.planLimits.selfhost.retention_days = 3650;
    await runHousekeeping(t.deps);
    expect(await exists(t, rows.self.id)).toBe(false);
  });
});

describe('the housekeeping runner', () => {
  it('isolates jobs: one that throws is reported and the others still run', async () => {
    const { t } = await app(10);
    const ran: string[] = [];
    const report = await runHousekeeping(t.deps, [
      { name: 'first', run: async () => ran.push('first') },
      {
        name: 'broken',
        run: async () => {
          throw new Error('boom');
        },
      },
      { name: 'last', run: async () => ran.push('last') },
    ]);
    expect(ran).toEqual(['first', 'last']);
    expect(report.broken).toEqual({ ok: false, error: 'Error: boom' });
    expect(report.last).toEqual({ ok: true, result: 2 });
  });

  it('runs the registered jobs, each once by name', async () => {
    const { t } = await app(10);
    const before = housekeepingJobs.length;
    let calls = 0;
    const job = { name: 'test-only', run: async () => ++calls };
    addHousekeepingJob(job);
    addHousekeepingJob(job);
    try {
      const names = housekeepingJobs.map((j) => j.name);
      expect(names.filter((n) => n === 'test-only')).toHaveLength(1);
      expect(names).toEqual(expect.arrayContaining(['quota-release', 'retention']));
      const report = await runHousekeeping(t.deps);
      expect(Object.keys(report)).toEqual(names);
      expect(Object.values(report).every((r) => r.ok)).toBe(true);
      expect(calls).toBe(1);
    } finally {
      housekeepingJobs.splice(before);
    }
  });
});
