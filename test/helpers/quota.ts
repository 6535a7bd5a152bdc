import crypto from 'node:crypto';
import { and, asc, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { deliveries, organizations } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from './app.js';
import { orgIdOf } from './seed.js';

/** Mid-month, fixed: what counts as "this month" never depends on when the suite runs. */
export const MID_MONTH = new Date(Date.UTC(2031, 2, 15, 12));

/** An app whose new organizations are on the free plan with `limit` submissions a month, and a settable clock. */
export async function quotaApp(limit: number, env: Record<string, string> = {}) {
  const t = await startTestApp({
    DEFAULT_PLAN: 'free',
    PLAN_LIMITS: JSON.stringify({ free: { submissions_per_month: limit } }),
    ...env,
  });
  const clock = { now: MID_MONTH };
  t.deps.now = () => clock.now;
  return { t, clock };
}

/** A new organization with one form routed to `routes` webhook destinations (route options per entry). */
export async function tenant(t: TestEnv, routes: Record<string, unknown>[] = [{}, {}]) {
  const { key } = await t.onboard();
  const orgId = await orgIdOf(t, key);
  const form = await t.api('POST', '/v1/forms', key, { json: { name: `F ${crypto.randomUUID().slice(0, 8)}` } });
  expect(form.status).toBe(201);
  const routeIds: string[] = [];
  for (const [i, opts] of routes.entries()) {
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: `hook ${i}`, config: { url: (opts.url as string) ?? 'http://127.0.0.1:9/hook' } },
    });
    expect(dest.status).toBe(201);
    const { url: _url, ...rest } = opts;
    const route = await t.api('POST', '/v1/routes', key, {
      json: { form_id: form.json.id, destination_id: dest.json.id, ...rest },
    });
    expect(route.status, route.text).toBe(201);
    routeIds.push(route.json.id);
  }
  return { key, orgId, formId: form.json.id as string, routeIds };
}

/** Posts `n` submissions to the form; returns their ids and statuses in order. */
export async function submitMany(t: TestEnv, formId: string, n: number, extra: Record<string, unknown> = {}) {
  const out: { id: string; status: string }[] = [];
  for (let i = 0; i < n; i += 1) {
    const r = await t.request('POST', `/s/${formId}`, { json: { n: i, ...extra } });
    expect(r.status).toBe(200);
    out.push({ id: r.json.submission_id, status: r.json.status });
  }
  return out;
}

/** Delivery rows of an organization, oldest first. */
export const deliveryRows = (t: TestEnv, orgId: string) =>
  t.deps.database.db
    .select()
    .from(deliveries)
    .where(eq(deliveries.orgId, orgId))
    .orderBy(asc(deliveries.createdAt), asc(deliveries.id));

/** Statuses of a submission's deliveries, sorted. */
export async function statusesOf(t: TestEnv, orgId: string, submissionId: string) {
  const rows = await t.deps.database.db
    .select({ status: deliveries.status })
    .from(deliveries)
    .where(and(eq(deliveries.orgId, orgId), eq(deliveries.submissionId, submissionId)));
  return rows.map((r) => r.status).sort();
}

export async function setPlan(t: TestEnv, orgId: string, plan: string, expiresAt: Date | null = null) {
  await t.deps.database.db
    .update(organizations)
    .set({ plan, planExpiresAt: expiresAt })
    .where(eq(organizations.id, orgId));
}

export async function usedThisMonth(t: TestEnv, key: string): Promise<number> {
  const me = await t.api('GET', '/v1/me', key);
  expect(me.status).toBe(200);
  return me.json.limits.used.submissions_this_month;
}
