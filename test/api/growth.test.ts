import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destinations, forms, organizations, sandboxes } from '../../server/db/schema.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { createForm, orgIdOf, seedDelivery, seedSubmission } from '../helpers/seed.js';

const OPERATOR = 'growth-ops@example.com';
const DAY_MS = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY_MS);

let t: TestEnv;
let ops: string;

beforeAll(async () => {
  t = await startTestApp({ ADMIN_EMAILS: OPERATOR, DEFAULT_PLAN: 'free' });
  ops = (await t.onboard(OPERATOR)).key;
});
afterAll(() => t.close());

async function org(plan: { plan: string; source: string; expires?: Date }, createdDaysAgo: number) {
  const { key } = await t.onboard();
  const id = await orgIdOf(t, key);
  await t.deps.database.db
    .update(organizations)
    .set({
      plan: plan.plan,
      planSource: plan.source,
      planExpiresAt: plan.expires ?? null,
      createdAt: ago(createdDaysAgo),
    })
    .where(eq(organizations.id, id));
  return { key, id };
}

async function sandbox(o: { orgId: string; formId: string; status: string; createdDaysAgo: number; expires: Date }) {
  await t.deps.database.db.insert(sandboxes).values({
    id: newId('sandbox'),
    orgId: o.orgId,
    formId: o.formId,
    name: 'Try it',
    tokenHash: crypto.randomBytes(16).toString('hex'),
    idempotencyKeyHash: crypto.randomBytes(16).toString('hex'),
    requestHash: 'x',
    sourceIp: '203.0.113.9',
    status: o.status,
    expiresAt: o.expires,
    claimedAt: o.status === 'claimed' ? new Date() : null,
    createdAt: ago(o.createdDaysAgo),
  });
}

describe('GET /v1/admin/growth', () => {
  it('answers exact aggregates: effective plans, windows, sandbox and test exclusions', async () => {
    const db = t.deps.database.db;
    // Organizations: the operator's (free, now), A (pro, now), B (selfhost, 10 days), C (team lapsed → free, 40 days).
    const a = await org({ plan: 'pro', source: 'complimentary' }, 0);
    const b = await org({ plan: 'selfhost', source: 'selfhost' }, 10);
    const c = await org({ plan: 'team', source: 'billing', expires: ago(1) }, 40);
    // The internal sandbox organization and its sandbox form are not counted.
    const sys = newId('organization');
    await db
      .insert(organizations)
      .values({ id: sys, slug: '_sandboxes', name: 'Sandboxes', plan: 'free', planSource: 'free' });
    const sysForm = newId('form');
    await db
      .insert(forms)
      .values({ id: sysForm, orgId: sys, projectId: newId('project'), slug: 'try', name: 'Try', sandbox: true });

    // Forms: f1 now, f2 10 days old (A); f3 40 days old (B).
    const f1 = await createForm(t, a.key);
    const f2 = await createForm(t, a.key);
    const f3 = await createForm(t, b.key);
    await db
      .update(forms)
      .set({ createdAt: ago(10) })
      .where(eq(forms.id, f2));
    await db
      .update(forms)
      .set({ createdAt: ago(40) })
      .where(eq(forms.id, f3));

    // Submissions: f1 real now (+ a sent delivery), f3 test now (+ a sent delivery: not real),
    // f2 real 20 days ago, f3 real 40 days ago, and a sandbox test submission (not counted).
    const s1 = await seedSubmission(t, { orgId: a.id, formId: f1 });
    const s2 = await seedSubmission(t, { orgId: b.id, formId: f3, test: true });
    await seedSubmission(t, { orgId: a.id, formId: f2, receivedAt: ago(20) });
    await seedSubmission(t, { orgId: b.id, formId: f3, receivedAt: ago(40) });
    await seedSubmission(t, { orgId: sys, formId: sysForm, test: true });
    const sent = { status: 'sent' as const, sentAt: new Date(), nextAttemptAt: null };
    await seedDelivery(t, { orgId: a.id, submissionId: s1.id, ...sent });
    await seedDelivery(t, { orgId: b.id, submissionId: s2.id, ...sent });
    await seedDelivery(t, { orgId: c.id, submissionId: s1.id, status: 'dead', nextAttemptAt: null });

    // Sandboxes created within 30 days: active, active past expiry, claimed, blocked; one older is left out.
    const soon = new Date(Date.now() + DAY_MS);
    await sandbox({ orgId: sys, formId: sysForm, status: 'active', createdDaysAgo: 0, expires: soon });
    await sandbox({ orgId: sys, formId: sysForm, status: 'active', createdDaysAgo: 2, expires: ago(1) });
    await sandbox({ orgId: sys, formId: sysForm, status: 'claimed', createdDaysAgo: 3, expires: ago(2) });
    await sandbox({ orgId: sys, formId: sysForm, status: 'blocked', createdDaysAgo: 1, expires: soon });
    await sandbox({ orgId: sys, formId: sysForm, status: 'blocked', createdDaysAgo: 31, expires: ago(30) });

    for (const [orgId, type] of [
      [a.id, 'email'],
      [a.id, 'email'],
      [b.id, 'slack'],
    ]) {
      await db.insert(destinations).values({ id: newId('destination'), orgId, type, name: type, config: {} });
    }

    const r = await t.api('GET', '/v1/admin/growth', ops);
    expect(r.status, r.text).toBe(200);
    expect(Math.abs(Date.parse(r.json.generated_at) - Date.now())).toBeLessThan(10_000);
    expect(r.json).toEqual({
      generated_at: expect.any(String),
      organizations: {
        total: 4,
        created_7d: 2,
        created_30d: 3,
        by_plan: { free: 2, pro: 1, team: 0, selfhost: 1 },
      },
      forms: { total: 3, created_7d: 1, created_30d: 2, active: 2 },
      submissions: {
        total: 4,
        last_7d: 2,
        last_30d: 3,
        real_last_30d: 2,
        test_last_30d: 1,
        orgs_with_real_delivery_30d: 1,
      },
      sandboxes: { retained_created_30d: 4, retained_claimed_30d: 1, retained_expired_or_blocked_30d: 2 },
      destinations: { by_type: { email: 2, telegram: 0, webhook: 0, slack: 1, discord: 0 } },
    });
    // Aggregates only: no ids, slugs or addresses.
    for (const secret of [OPERATOR, a.id, b.id, sys, f1, '_sandboxes']) expect(r.text).not.toContain(secret);
  });

  it('is for operators only', async () => {
    expect((await t.api('GET', '/v1/admin/growth', null)).status).toBe(401);
    const someone = await t.onboard();
    const r = await t.api('GET', '/v1/admin/growth', someone.key);
    expect(r.status).toBe(403);
    expect(r.json.error.hint).toContain('ADMIN_EMAILS');
    const read = await t.onboard(OPERATOR, { scopes: ['read'] });
    expect((await t.api('GET', '/v1/admin/growth', read.key)).status).toBe(200);
  });
});
