import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingEvents } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { orgIdOf } from '../helpers/seed.js';

const KEY = crypto.randomBytes(24);
const SECRET = `whsec_${KEY.toString('base64')}`;
const PATH = '/v1/billing/webhook';

let t: TestEnv;
let key: string;
let orgId: string;

beforeAll(async () => {
  t = await startTestApp({ BILLING_WEBHOOK_SECRET: SECRET, DEFAULT_PLAN: 'free' });
  key = (await t.onboard()).key;
  orgId = await orgIdOf(t, key);
});
afterAll(() => t.close());

/** Standard Webhooks v1, computed here independently of the server code. */
function sign(secretKey: Buffer, id: string, ts: string, body: string) {
  return `v1,${crypto.createHmac('sha256', secretKey).update(`${id}.${ts}.${body}`).digest('base64')}`;
}

const nowS = () => String(Math.floor(Date.now() / 1000));
const msgId = () => `msg_${crypto.randomUUID()}`;

function deliver(
  target: TestEnv,
  body: unknown,
  o: { id?: string; ts?: string; key?: Buffer; signature?: string; raw?: string } = {},
) {
  const raw = o.raw ?? JSON.stringify(body);
  const id = o.id ?? msgId();
  const ts = o.ts ?? nowS();
  return target.request('POST', PATH, {
    body: raw,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': ts,
      'webhook-signature': o.signature ?? sign(o.key ?? KEY, id, ts, raw),
    },
  });
}

const updated = (data: Record<string, unknown>) => ({
  type: 'plan.updated',
  data: { organization_id: orgId, ...data },
});
const plan = async () => (await t.api('GET', '/v1/me', key)).json.organization;

describe('POST /v1/billing/webhook', () => {
  it('sets the plan from a signed plan.updated (plan_source billing) and answers 202', async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const id = msgId();
    const r = await deliver(t, updated({ plan: 'team', expires_at: expires, note: 'Stripe sub_123' }), { id });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toEqual({ ok: true, duplicate: false });
    expect(await plan()).toMatchObject({
      plan: 'team',
      plan_source: 'billing',
      plan_expires_at: expires,
      plan_note: 'Stripe sub_123',
    });
    const [row] = await t.deps.database.db.select().from(billingEvents).where(eq(billingEvents.id, id));
    expect(row).toMatchObject({ type: 'plan.updated', orgId });
  });

  it('ignores a replayed webhook-id with 202, even with another validly signed body', async () => {
    const id = msgId();
    const body = JSON.stringify(updated({ plan: 'pro' }));
    const ts = nowS();
    const first = await deliver(t, null, { id, ts, raw: body });
    expect(first.json).toEqual({ ok: true, duplicate: false });
    const replay = await deliver(t, null, { id, ts, raw: body });
    expect(replay.status).toBe(202);
    expect(replay.json).toEqual({ ok: true, duplicate: true });
    const other = await deliver(t, updated({ plan: 'selfhost' }), { id });
    expect(other.status).toBe(202);
    expect(other.json.duplicate).toBe(true);
    expect((await plan()).plan).toBe('pro');
  });

  it('applies a message at most once when it arrives twice at the same moment', async () => {
    const id = msgId();
    const body = JSON.stringify(updated({ plan: 'team' }));
    const ts = nowS();
    const both = await Promise.all([deliver(t, null, { id, ts, raw: body }), deliver(t, null, { id, ts, raw: body })]);
    expect(both.map((r) => r.status)).toEqual([202, 202]);
    expect(both.map((r) => r.json.duplicate).sort()).toEqual([false, true]);
  });

  it('returns the organization to free on plan.canceled', async () => {
    const r = await deliver(t, { type: 'plan.canceled', data: { organization_id: orgId } });
    expect(r.status).toBe(202);
    expect(await plan()).toMatchObject({ plan: 'free', plan_source: 'free', plan_expires_at: null, plan_note: null });
  });

  it('accepts the signature among several candidates', async () => {
    const id = msgId();
    const ts = nowS();
    const raw = JSON.stringify(updated({ plan: 'pro' }));
    const good = sign(KEY, id, ts, raw);
    const r = await deliver(t, null, { id, ts, raw, signature: `v1,${Buffer.alloc(32).toString('base64')} ${good}` });
    expect(r.status).toBe(202);
  });

  it('answers 400 when unsigned, a header is missing or malformed, or the signed body is not JSON', async () => {
    const bare = await t.request('POST', PATH, { json: updated({ plan: 'pro' }) });
    expect(bare.status).toBe(400);
    expect(bare.json.error).toMatchObject({ code: 'bad_request', hint: expect.any(String) });
    expect(bare.json.error.details.missing).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    const noSig = await t.request('POST', PATH, {
      json: updated({ plan: 'pro' }),
      headers: { 'webhook-id': msgId(), 'webhook-timestamp': nowS() },
    });
    expect(noSig.status).toBe(400);
    expect(noSig.json.error.details.missing).toEqual(['webhook-signature']);
    const badTs = await deliver(t, updated({ plan: 'pro' }), { ts: 'yesterday' });
    expect(badTs.status).toBe(400);
    // Signed but not JSON: the signature passes, parsing fails.
    const notJson = await deliver(t, null, { raw: '{"type":' });
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.code).toBe('bad_request');
  });

  it('answers 401 to forged, tampered and stale messages, and changes nothing', async () => {
    const before = await plan();
    const forged = await deliver(t, updated({ plan: 'team' }), { key: crypto.randomBytes(24) });
    expect(forged.status).toBe(401);
    expect(forged.json.error).toMatchObject({ code: 'unauthorized', hint: expect.any(String) });

    const id = msgId();
    const ts = nowS();
    const signature = sign(KEY, id, ts, JSON.stringify(updated({ plan: 'pro' })));
    const tampered = await deliver(t, updated({ plan: 'team' }), { id, ts, signature });
    expect(tampered.status).toBe(401);

    // Signed over the parsed-and-reserialized body instead of the raw bytes: refused.
    const raw = `{"type": "plan.updated",  "data": {"organization_id": "${orgId}", "plan": "team"}}`;
    const reserialized = sign(KEY, id, ts, JSON.stringify(JSON.parse(raw)));
    expect((await deliver(t, null, { id, ts, raw, signature: reserialized })).status).toBe(401);

    const garbage = await deliver(t, updated({ plan: 'team' }), { signature: 'v1,not-base64!! v2,abc' });
    expect(garbage.status).toBe(401);

    for (const offset of [-301, 301]) {
      const stale = await deliver(t, updated({ plan: 'team' }), { ts: String(Math.floor(Date.now() / 1000) + offset) });
      expect(stale.status).toBe(401);
      expect(stale.json.error.message).toContain('stale');
    }
    expect(await plan()).toEqual(before);
  });

  it('accepts the exact raw bytes it was signed over (whitespace and key order kept)', async () => {
    const raw = `{ "data": {"plan": "team", "organization_id": "${orgId}"},\n  "type": "plan.updated" }`;
    const r = await deliver(t, null, { raw });
    expect(r.status, r.text).toBe(202);
    expect((await plan()).plan).toBe('team');
  });

  it('answers 422 to an unknown type or a bad body, and 404 to an unknown organization', async () => {
    const unknown = await deliver(t, { type: 'invoice.paid', data: { organization_id: orgId } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.error.code).toBe('validation_failed');
    const bad = await deliver(t, { type: 'plan.updated', data: { plan: 'pro' } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.issues).toEqual(expect.any(Array));
    const badPlan = await deliver(t, updated({ plan: 'gold' }));
    expect(badPlan.status).toBe(422);

    const id = msgId();
    const nobody = await deliver(
      t,
      { type: 'plan.updated', data: { organization_id: 'org_nobody', plan: 'pro' } },
      { id },
    );
    expect(nobody.status).toBe(404);
    expect(nobody.json.error.code).toBe('not_found');
    // Not recorded: the provider's corrected redelivery under the same id is applied.
    expect(await t.deps.database.db.select().from(billingEvents).where(eq(billingEvents.id, id))).toEqual([]);
    const fixed = await deliver(t, updated({ plan: 'pro' }), { id });
    expect(fixed.json).toEqual({ ok: true, duplicate: false });
  });
});

describe('BILLING_WEBHOOK_SECRET', () => {
  it('is off when unset: 404 with a hint naming the setting', async () => {
    const off = await startTestApp();
    try {
      const r = await off.request('POST', PATH, { json: { type: 'plan.updated', data: {} } });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('not_found');
      expect(r.json.error.hint).toContain('BILLING_WEBHOOK_SECRET');
    } finally {
      await off.close();
    }
  });

  it('takes a raw string secret as the key bytes', async () => {
    const raw = 'a plain shared secret';
    const other = await startTestApp({ BILLING_WEBHOOK_SECRET: raw });
    try {
      const k = (await other.onboard()).key;
      const org = await orgIdOf(other, k);
      const body = { type: 'plan.updated', data: { organization_id: org, plan: 'pro' } };
      expect((await deliver(other, body, { key: Buffer.from(raw) })).status).toBe(202);
      expect((await deliver(other, body, { key: KEY })).status).toBe(401);
    } finally {
      await other.close();
    }
  });
});
