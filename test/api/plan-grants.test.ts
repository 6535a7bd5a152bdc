import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations, planGrants, planRedemptions } from '../../server/db/schema.js';
import { DEFAULT_PLAN_LIMITS } from '../../shared/plans.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { orgIdOf } from '../helpers/seed.js';

const OPERATOR = 'ops@example.com';
const DAY_MS = 86_400_000;

let t: TestEnv;
let ops: string;

beforeAll(async () => {
  t = await startTestApp({ ADMIN_EMAILS: `someone@example.com, ${OPERATOR.toUpperCase()}`, DEFAULT_PLAN: 'free' });
  ops = (await t.onboard(OPERATOR)).key;
});
afterAll(() => t.close());

async function grant(body: Record<string, unknown> = {}) {
  const r = await t.api('POST', '/v1/admin/plan-grants', ops, { json: { plan: 'pro', ...body } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; code: string } & Record<string, unknown>;
}

const redeem = (key: string, code: string) => t.api('POST', '/v1/plan/redeem', key, { json: { code } });

describe('POST /v1/admin/plan-grants', () => {
  it('creates a grant whose code is shown once and stored only as a hash', async () => {
    const r = await t.api('POST', '/v1/admin/plan-grants', ops, {
      json: { plan: 'team', note: 'Launch partner', plan_duration_days: 90, max_redemptions: 3 },
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^pg_/),
      plan: 'team',
      note: 'Launch partner',
      expires_at: null,
      plan_duration_days: 90,
      max_redemptions: 3,
      redeemed_count: 0,
      created_by_user_id: expect.stringMatching(/^usr_/),
      created_at: expect.any(String),
      revoked_at: null,
      code: expect.stringMatching(/^pg_[a-z2-7]{32}$/),
    });
    const { code, id } = r.json;
    const [row] = await t.deps.database.db.select().from(planGrants).where(eq(planGrants.id, id));
    expect(row.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(code.slice(3));

    const list = await t.api('GET', '/v1/admin/plan-grants', ops);
    expect(list.status).toBe(200);
    expect(list.json.data[0]).toMatchObject({ id, plan: 'team', redeemed_count: 0 });
    expect(list.json.data[0].code).toBeUndefined();
    expect(list.text).not.toContain(code.slice(3));
  });

  it('defaults to one redemption and no expiry, and refuses bad input with 422', async () => {
    expect(await grant()).toMatchObject({ max_redemptions: 1, plan_duration_days: null, expires_at: null, note: '' });
    for (const json of [
      { plan: 'gold' },
      { plan: 'pro', max_redemptions: 0 },
      { plan: 'pro', plan_duration_days: 1.5 },
      { plan: 'pro', expires_at: 'tomorrow' },
      { plan: 'pro', expires_at: new Date(Date.now() - 1000).toISOString() },
      { plan: 'pro', extra: true },
    ]) {
      const r = await t.api('POST', '/v1/admin/plan-grants', ops, { json });
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });

  it('revokes (idempotently) and answers 404 for an unknown id', async () => {
    const g = await grant();
    const r = await t.api('POST', `/v1/admin/plan-grants/${g.id}/revoke`, ops);
    expect(r.status).toBe(200);
    expect(r.json.revoked_at).toEqual(expect.any(String));
    const again = await t.api('POST', `/v1/admin/plan-grants/${g.id}/revoke`, ops);
    expect(again.json.revoked_at).toBe(r.json.revoked_at);
    const missing = await t.api('POST', '/v1/admin/plan-grants/pg_01h00000000000000000000000/revoke', ops);
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('not_found');
  });
});

describe('operators only', () => {
  it('answers 401 without credentials and 403 with a hint to anyone not in ADMIN_EMAILS', async () => {
    expect((await t.api('GET', '/v1/admin/plan-grants', null)).status).toBe(401);
    const someone = await t.onboard();
    const calls: [string, string, unknown?][] = [
      ['POST', '/v1/admin/plan-grants', { plan: 'pro' }],
      ['GET', '/v1/admin/plan-grants'],
      ['POST', '/v1/admin/plan-grants/pg_01h00000000000000000000000/revoke'],
      ['GET', '/v1/admin/growth'],
    ];
    for (const [method, path, json] of calls) {
      const r = await t.api(method, path, someone.key, json ? { json } : {});
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.error.code).toBe('forbidden');
      expect(r.json.error.hint).toContain('ADMIN_EMAILS');
    }
  });

  it('lets an operator read with a read key but not create', async () => {
    const read = await t.onboard(OPERATOR, { scopes: ['read'] });
    expect((await t.api('GET', '/v1/admin/plan-grants', read.key)).status).toBe(200);
    const r = await t.api('POST', '/v1/admin/plan-grants', read.key, { json: { plan: 'pro' } });
    expect(r.status).toBe(403);
  });
});

describe('POST /v1/plan/redeem', () => {
  it("sets the caller's plan as complimentary, with expiry and note, and /v1/me shows it", async () => {
    const g = await grant({ plan: 'pro', note: 'Thanks for the bug reports', plan_duration_days: 30 });
    const a = await t.onboard();
    const before = Date.now();
    const r = await redeem(a.key, g.code);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      plan: 'pro',
      plan_source: 'complimentary',
      plan_note: 'Thanks for the bug reports',
      next: [expect.objectContaining({ method: 'GET', path: '/v1/me' })],
    });
    const expires = Date.parse(r.json.plan_expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 30 * DAY_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS + 1000);
    const me = await t.api('GET', '/v1/me', a.key);
    expect(me.json.organization).toMatchObject({
      plan: 'pro',
      plan_source: 'complimentary',
      plan_expires_at: r.json.plan_expires_at,
      plan_note: 'Thanks for the bug reports',
    });
    expect(me.json.limits.forms).toBe(DEFAULT_PLAN_LIMITS.pro.forms);
    const list = await t.api('GET', '/v1/admin/plan-grants', ops);
    expect(list.json.data.find((x: { id: string }) => x.id === g.id).redeemed_count).toBe(1);
  });

  it('falls back to free once the granted plan expires', async () => {
    const g = await grant({ plan: 'team', plan_duration_days: 7 });
    const a = await t.onboard();
    expect((await redeem(a.key, g.code)).status).toBe(200);
    const past = new Date(Date.now() - 1000);
    await t.deps.database.db
      .update(organizations)
      .set({ planExpiresAt: past })
      .where(eq(organizations.id, await orgIdOf(t, a.key)));
    const me = await t.api('GET', '/v1/me', a.key);
    expect(me.json.organization).toMatchObject({
      plan: 'free',
      plan_source: 'free',
      plan_expires_at: past.toISOString(),
    });
    expect(me.json.limits.forms).toBe(DEFAULT_PLAN_LIMITS.free.forms);
  });

  it('sets no expiry without plan_duration_days', async () => {
    const g = await grant({ plan: 'selfhost' });
    const a = await t.onboard();
    const r = await redeem(a.key, g.code);
    expect(r.json).toMatchObject({
      plan: 'selfhost',
      plan_source: 'complimentary',
      plan_expires_at: null,
      plan_note: null,
    });
  });

  it('refuses precisely: unknown 404, revoked 410, expired 410, used up 409, same organization twice 409', async () => {
    const a = await t.onboard();
    const b = await t.onboard();

    const unknown = await redeem(a.key, 'pg_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('not_found');

    const revoked = await grant();
    await t.api('POST', `/v1/admin/plan-grants/${revoked.id}/revoke`, ops);
    const r1 = await redeem(a.key, revoked.code);
    expect(r1.status).toBe(410);
    expect(r1.json.error).toMatchObject({ code: 'gone', message: expect.stringContaining('revoked') });

    const expired = await grant({ expires_at: new Date(Date.now() + 60_000).toISOString() });
    await t.deps.database.db
      .update(planGrants)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(planGrants.id, expired.id));
    const r2 = await redeem(a.key, expired.code);
    expect(r2.status).toBe(410);
    expect(r2.json.error.message).toContain('expired');

    const single = await grant({ max_redemptions: 1 });
    expect((await redeem(a.key, single.code)).status).toBe(200);
    const usedUp = await redeem(b.key, single.code);
    expect(usedUp.status).toBe(409);
    expect(usedUp.json.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('used up') });

    const multi = await grant({ max_redemptions: 5 });
    expect((await redeem(a.key, multi.code)).status).toBe(200);
    const twice = await redeem(a.key, multi.code);
    expect(twice.status).toBe(409);
    expect(twice.json.error.message).toContain('already redeemed');
    expect(twice.json.error.hint).toBeTruthy();

    const missing = await t.api('POST', '/v1/plan/redeem', a.key, { json: {} });
    expect(missing.status).toBe(422);
  });

  it('needs a manage key', async () => {
    const g = await grant();
    const a = await t.onboard();
    const read = await t.onboard(a.email, { scopes: ['read'] });
    expect((await redeem(read.key, g.code)).status).toBe(403);
    expect((await t.api('POST', '/v1/plan/redeem', null, { json: { code: g.code } })).status).toBe(401);
  });

  it('lets exactly one of two organizations redeem the last slot at once', async () => {
    const g = await grant({ max_redemptions: 1 });
    const a = await t.onboard();
    const b = await t.onboard();
    const results = await Promise.all([redeem(a.key, g.code), redeem(b.key, g.code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const [row] = await t.deps.database.db.select().from(planGrants).where(eq(planGrants.id, g.id));
    expect(row.redeemedCount).toBe(1);
    const rows = await t.deps.database.db.select().from(planRedemptions).where(eq(planRedemptions.grantId, g.id));
    expect(rows).toHaveLength(1);
  });

  it('counts one organization once even when it redeems twice at once', async () => {
    const g = await grant({ max_redemptions: 5 });
    const a = await t.onboard();
    const results = await Promise.all([redeem(a.key, g.code), redeem(a.key, g.code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const [row] = await t.deps.database.db.select().from(planGrants).where(eq(planGrants.id, g.id));
    expect(row.redeemedCount).toBe(1);
  });
});
