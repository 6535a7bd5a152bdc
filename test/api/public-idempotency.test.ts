import crypto from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyKeys } from '../../server/db/schema.js';
import { PUBLIC_SCOPE } from '../../server/http/idempotency.js';
import { deleteExpiredKeys } from '../../server/worker/idempotency-expiry.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { signIn } from '../helpers/session.js';

let t: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const fresh = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

/** Asks for a code (without a key) and reads it from the mail the SMTP sink received. */
async function codeFor(email: string) {
  const before = t.smtp.messages.length;
  expect((await t.request('POST', '/v1/auth/request-code', { json: { email } })).status).toBe(200);
  const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  return /\b(\d{6})\b/.exec(mail.text)?.[1] as string;
}

const post = (path: string, json: Record<string, unknown>, key: string) =>
  t.request('POST', path, { json, headers: { 'idempotency-key': key } });

const publicRows = () =>
  t.deps.database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.scope, PUBLIC_SCOPE));

describe('Idempotency-Key on the credential-less POSTs under /v1', () => {
  it('answers a repeat of verify-code with the first answer (the same API key), and mints one key', async () => {
    const email = fresh('idem');
    const code = await codeFor(email);
    const key = crypto.randomUUID();
    const first = await post('/v1/auth/verify-code', { email, code }, key);
    expect(first.status).toBe(201);
    const apiKey = first.json.api_key as string;
    expect(apiKey).toBeTruthy();
    // The first answer was lost on the way: the client sends the same request again.
    const again = await post('/v1/auth/verify-code', { email, code }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    // The key it got works, and the consumed code minted nothing more.
    expect((await t.request('GET', '/v1/me', { key: apiKey })).status).toBe(200);
    const keys = await t.request('GET', '/v1/api-keys', { key: apiKey });
    expect(keys.json.data).toHaveLength(1);
    // Without the header the code is spent: the ordinary answer.
    expect((await t.request('POST', '/v1/auth/verify-code', { json: { email, code } })).status).toBe(401);
  });

  it('keeps neither the key nor the answer in the clear', async () => {
    const email = fresh('sealed');
    const code = await codeFor(email);
    const key = crypto.randomUUID();
    const first = await post('/v1/auth/verify-code', { email, code }, key);
    const apiKey = first.json.api_key as string;
    const rows = await publicRows();
    expect(rows.some((r) => r.status === 201 && r.responseType === 'sealed')).toBe(true);
    expect(rows.some((r) => r.key === key)).toBe(false);
    const mine = rows.filter((r) => r.responseBody?.includes(apiKey) || r.responseBody?.includes(email));
    expect(mine).toEqual([]);
    expect(rows.every((r) => r.status === null || r.responseType === 'sealed')).toBe(true);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.key))).toBe(true);
  });

  // Changed by issue 28 (point 2): a 409 told a guesser the key was taken with another body; now
  // another body under a public key is a request of its own, and learns nothing of the first.
  it('runs another body under the same key as a request of its own (no 409, nothing replayed)', async () => {
    const key = crypto.randomUUID();
    const one = fresh('one');
    const two = fresh('two');
    const before = t.smtp.messages.length;
    const a = await post('/v1/auth/request-code', { email: one }, key);
    expect(a.status).toBe(200);
    const b = await post('/v1/auth/request-code', { email: two }, key);
    expect(b.status).toBe(200);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(two));
    // The same body again is still a replay.
    const again = await post('/v1/auth/request-code', { email: two }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('sends a repeat of request-code one mail only', async () => {
    const email = fresh('once');
    const key = crypto.randomUUID();
    const before = t.smtp.messages.length;
    expect((await post('/v1/auth/request-code', { email }, key)).status).toBe(200);
    await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email));
    const again = await post('/v1/auth/request-code', { email }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await new Promise((r) => setTimeout(r, 300));
    expect(t.smtp.messages.slice(before).filter((m) => m.to.includes(email))).toHaveLength(1);
  });

  it('replays a sign-in with its session cookie', async () => {
    const email = fresh('cookie');
    // The account exists first (sign-in never creates one).
    const code = await codeFor(email);
    expect((await t.request('POST', '/v1/auth/verify-code', { json: { email, code } })).status).toBe(201);
    const signInCode = await codeFor(email);
    const key = crypto.randomUUID();
    const first = await post('/v1/auth/sign-in', { email, code: signInCode }, key);
    expect(first.status).toBe(200);
    const cookie = first.headers.get('set-cookie');
    expect(cookie).toMatch(/=/);
    const again = await post('/v1/auth/sign-in', { email, code: signInCode }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('set-cookie')).toBe(cookie);
    const session = (cookie as string).split(';')[0];
    expect((await t.request('GET', '/v1/me', { headers: { cookie: session } })).status).toBe(200);
  });

  it('runs a request again once its key is older than 24 h, and housekeeping deletes such keys', async () => {
    const email = fresh('old');
    const code = await codeFor(email);
    const key = crypto.randomUUID();
    expect((await post('/v1/auth/verify-code', { email, code }, key)).status).toBe(201);
    await t.deps.database.db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(eq(idempotencyKeys.scope, PUBLIC_SCOPE));
    // The kept answer is gone: the request runs, and the spent code is refused.
    expect((await post('/v1/auth/verify-code', { email, code }, key)).status).toBe(401);
    // What is still older than 24 h goes with housekeeping; the key just used again stays.
    const old = (await publicRows()).length - 1;
    expect(old).toBeGreaterThan(0);
    expect(await deleteExpiredKeys(t.deps)).toEqual({ deleted: old });
    expect(await publicRows()).toHaveLength(1);
  });

  it("keeps an organization's keys 24 h too: a later repeat runs again, and housekeeping deletes them", async () => {
    const { key } = await t.onboard();
    const create = (name: string, idem: string) =>
      t.request('POST', '/v1/projects', { key, json: { name }, headers: { 'idempotency-key': idem } });
    const idem = crypto.randomUUID();
    const first = await create('Kept', idem);
    expect(first.status).toBe(201);
    const again = await create('Kept', idem);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);
    await t.deps.database.db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(eq(idempotencyKeys.key, idem));
    const later = await create('Kept', idem);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    const other = crypto.randomUUID();
    expect((await create('Other', other)).status).toBe(201);
    await t.deps.database.db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(eq(idempotencyKeys.key, other));
    await deleteExpiredKeys(t.deps);
    const left = await t.deps.database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, other));
    expect(left).toEqual([]);
    const kept = await t.deps.database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(kept).toHaveLength(1);
  });

  it('rejects a key longer than 255 characters with 422', async () => {
    const r = await post('/v1/auth/request-code', { email: fresh('long') }, 'k'.repeat(256));
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('validation_failed');
  });

  it('never replays a sign-out: a second one with the same key ends the session it is sent with', async () => {
    const first = await signIn(t);
    const key = crypto.randomUUID();
    const out = (cookie: string) =>
      t.request('POST', '/v1/auth/sign-out', { headers: { cookie, 'idempotency-key': key } });
    expect((await out(first.cookie)).status).toBe(204);
    const second = await signIn(t, first.email);
    expect((await t.request('GET', '/v1/me', { headers: { cookie: second.cookie } })).status).toBe(200);
    const r = await out(second.cookie);
    expect(r.status).toBe(204);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    expect((await t.request('GET', '/v1/me', { headers: { cookie: second.cookie } })).status).toBe(401);
  });

  it('never replays an organization switch: the same key switches again', async () => {
    const s = await signIn(t);
    const as = (method: string, path: string, headers: Record<string, string> = {}) =>
      t.request(method, path, { headers: { cookie: s.cookie, ...headers } });
    const other = await t.request('POST', '/v1/organizations', {
      headers: { cookie: s.cookie },
      json: { name: 'Other' },
    });
    expect(other.status).toBe(201);
    const key = crypto.randomUUID();
    const to = (id: string) => as('POST', `/v1/organizations/${id}/switch`, { 'idempotency-key': key });
    expect((await to(other.json.id)).json.id).toBe(other.json.id);
    expect((await as('POST', `/v1/organizations/${s.personal.id}/switch`)).status).toBe(200);
    const again = await to(other.json.id);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect((await as('GET', '/v1/me')).json.organization.id).toBe(other.json.id);
  });

  it('keeps no secret in the clear: a created API key is sealed like the public answers', async () => {
    const s = await signIn(t);
    const idem = crypto.randomUUID();
    const create = () =>
      t.request('POST', '/v1/api-keys', {
        headers: { cookie: s.cookie, 'idempotency-key': idem },
        json: { name: 'ci', scopes: ['read'] },
      });
    const first = await create();
    expect(first.status).toBe(201);
    const secret = first.json.api_key as string;
    const rows = await t.deps.database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, idem));
    expect(rows).toHaveLength(1);
    expect(rows[0].responseType).toBe('sealed');
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(secret.slice('svc_live_'.length, 'svc_live_'.length + 16));
    // The client that holds the key still gets its answer again.
    const again = await create();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.api_key).toBe(secret);
  });
});
