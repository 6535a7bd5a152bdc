import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailCodes } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startSmtpSink } from '../helpers/smtp.js';

let t: TestEnv;

const fresh = (tag = 'a') => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

/** Asks for a code and reads it from the mail the SMTP sink received. */
async function requestCode(email: string) {
  const before = t.smtp.messages.length;
  const r = await t.request('POST', '/v1/auth/request-code', { json: { email } });
  expect(r.status).toBe(200);
  const mail = await t.smtp.waitFor(
    (m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email.trim().toLowerCase()),
  );
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  expect(code).toMatch(/^\d{6}$/);
  return code as string;
}

const verify = (json: Record<string, unknown>) => t.request('POST', '/v1/auth/verify-code', { json });

/** A 6-digit code that is not `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('POST /v1/auth/request-code', () => {
  it('answers 200 {ok, expires_in: 600, next} for a new and for an existing address', async () => {
    const email = fresh();
    const first = await t.request('POST', '/v1/auth/request-code', { json: { email } });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ ok: true, expires_in: 600, next: expect.any(String) });
    expect(first.json.next).toMatch(/verify-code/);
    const code = await requestCode(email);
    expect((await verify({ email, code })).status).toBe(201);
    const again = await t.request('POST', '/v1/auth/request-code', { json: { email } });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
  });

  it('answers 422 validation_failed for a malformed or missing email', async () => {
    for (const json of [{ email: 'not-an-email' }, {}, { email: '' }, { email: 42 }]) {
      const r = await t.request('POST', '/v1/auth/request-code', { json });
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.details.issues[0]).toMatchObject({ path: 'email', message: expect.any(String) });
    }
  });

  it('mails a 6-digit code to the address, trimmed and lowercased', async () => {
    const local = `Mixed-${crypto.randomUUID().slice(0, 8)}`;
    const before = t.smtp.messages.length;
    const r = await t.request('POST', '/v1/auth/request-code', { json: { email: `  ${local}@Example.COM ` } });
    expect(r.status).toBe(200);
    const lower = `${local.toLowerCase()}@example.com`;
    const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(lower));
    expect(mail.to).toEqual([lower]);
    expect(mail.text).toMatch(/\b\d{6}\b/);
    const rows = await t.deps.database.db.select().from(emailCodes).where(eq(emailCodes.email, lower));
    expect(rows).toHaveLength(1);
    // The lowercased address verifies with the code, whatever case it is typed in.
    const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
    const v = await verify({ email: `${local.toUpperCase()}@EXAMPLE.com`, code });
    expect(v.status).toBe(201);
    expect(v.json.user.email).toBe(lower);
  });

  it('stores the code hashed: the digits never appear in code_hash', async () => {
    const email = fresh('hash');
    const code = await requestCode(email);
    const rows = await t.deps.database.rows<Record<string, unknown>>(
      sql`select * from email_codes where email = ${email}`,
    );
    expect(rows).toHaveLength(1);
    const hash = String(rows[0].code_hash);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(code);
    expect(JSON.stringify(rows)).not.toContain(code);
  });

  it('throttles per address: 5 per window, then 429 with Retry-After', async () => {
    const email = fresh('throttle');
    for (let i = 0; i < 5; i += 1) {
      expect((await t.request('POST', '/v1/auth/request-code', { json: { email } })).status).toBe(200);
    }
    const r = await t.request('POST', '/v1/auth/request-code', { json: { email } });
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBe('rate_limited');
    const retry = Number(r.headers.get('retry-after'));
    expect(Number.isInteger(retry)).toBe(true);
    // The oldest of the five codes leaves the 600 s window only after about 600 s.
    expect(retry).toBeGreaterThan(500);
    expect(retry).toBeLessThanOrEqual(600);
    // Another address is not affected.
    expect((await t.request('POST', '/v1/auth/request-code', { json: { email: fresh() } })).status).toBe(200);
  });

  it('holds the per-address limit under concurrent requests', async () => {
    const email = fresh('burst');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => t.request('POST', '/v1/auth/request-code', { json: { email } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const rows = await t.deps.database.db.select().from(emailCodes).where(eq(emailCodes.email, email));
    expect(rows).toHaveLength(5);
  });

  it('throttles per client IP across addresses (CODE_REQUESTS_PER_IP)', async () => {
    const small = await startTestApp({ CODE_REQUESTS_PER_IP: '3' });
    try {
      // A client IP of its own: other suites may share the database (TEST_DATABASE_URL).
      const headers = { 'x-forwarded-for': `203.0.113.${crypto.randomInt(1, 255)}, 10.0.0.1` };
      for (let i = 0; i < 3; i += 1) {
        const r = await small.request('POST', '/v1/auth/request-code', { json: { email: fresh('ip') }, headers });
        expect(r.status).toBe(200);
      }
      const r = await small.request('POST', '/v1/auth/request-code', { json: { email: fresh('ip') }, headers });
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.json.error.details.retry_after_s).toBe(Number(r.headers.get('retry-after')));
    } finally {
      await small.close();
    }
  });

  it('answers 501 not_implemented when mail sending is off (MAIL_TRANSPORT=none)', async () => {
    const off = await startTestApp({ MAIL_TRANSPORT: 'none' });
    try {
      const r = await off.request('POST', '/v1/auth/request-code', { json: { email: fresh() } });
      expect(r.status).toBe(501);
      expect(r.json.error.code).toBe('not_implemented');
      expect(r.json.error.hint).toMatch(/SMTP_URL|MAIL_TRANSPORT/);
    } finally {
      await off.close();
    }
  });

  it('answers 502 bad_gateway when the SMTP server refuses, and keeps no usable code', async () => {
    const refusing = await startSmtpSink({ reject: () => true });
    const broken = await startTestApp({ SMTP_URL: refusing.url });
    try {
      const email = fresh('refused');
      const r = await broken.request('POST', '/v1/auth/request-code', { json: { email } });
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe('bad_gateway');
      const rows = await broken.deps.database.db.select().from(emailCodes).where(eq(emailCodes.email, email));
      expect(rows).toHaveLength(0);
    } finally {
      await broken.close();
      await refusing.close();
    }
  });
});

describe('POST /v1/auth/verify-code', () => {
  it('mints a manage key: 201 with the whole answer and no cookie', async () => {
    const email = fresh('verify');
    const code = await requestCode(email);
    const r = await verify({ email, code });
    expect(r.status).toBe(201);
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(r.json).toEqual({
      api_key: expect.stringMatching(/^svc_live_[A-Za-z0-9]{32,}$/),
      key_id: expect.stringMatching(/^key_/),
      scopes: ['manage'],
      organization: { id: expect.stringMatching(/^org_/), slug: expect.any(String), name: expect.any(String) },
      user: { email, created: true },
      next: expect.any(Array),
    });
    expect(r.json.next.length).toBeGreaterThan(0);
    for (const n of r.json.next) expect(typeof n).toBe('string');
    const me = await t.api('GET', '/v1/me', r.json.api_key);
    expect(me.status).toBe(200);
    expect(me.json.organization.id).toBe(r.json.organization.id);
  });

  it('names the key agent-YYYY-MM-DD by default, and takes key_name and scopes', async () => {
    const email = fresh('name');
    const a = await verify({ email, code: await requestCode(email) });
    const list = await t.api('GET', '/v1/api-keys', a.json.api_key);
    const row = list.json.data.find((k: { key_id: string }) => k.key_id === a.json.key_id);
    expect(row.name).toBe(`agent-${new Date().toISOString().slice(0, 10)}`);
    const b = await verify({ email, code: await requestCode(email), key_name: 'x'.repeat(32), scopes: ['read'] });
    expect(b.status).toBe(201);
    expect(b.json.scopes).toEqual(['read']);
    const got = await t.api('GET', `/v1/api-keys/${b.json.key_id}`, a.json.api_key);
    expect(got.json).toMatchObject({ name: 'x'.repeat(32), scopes: ['read'] });
  });

  it('validates key_name (1..32), scopes (at least one, known) and the code format with 422', async () => {
    const email = fresh('invalid');
    const code = await requestCode(email);
    const bad = [
      { email, code, key_name: 'x'.repeat(33) },
      { email, code, key_name: '' },
      { email, code, scopes: [] },
      { email, code, scopes: ['admin'] },
      { email, code: '12345' },
      { email, code: 'abcdef' },
      { email, code, extra: true },
      { code },
    ];
    for (const json of bad) {
      const r = await verify(json);
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.details.issues.length).toBeGreaterThan(0);
    }
    // Validation failures do not spend the code.
    expect((await verify({ email, code })).status).toBe(201);
  });

  it('answers 401 for a wrong code, and refuses the address with 429 after 5 wrong tries', async () => {
    const email = fresh('tries');
    const code = await requestCode(email);
    for (let i = 0; i < 5; i += 1) {
      const r = await verify({ email, code: wrong(code) });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
      expect(r.json.error.hint).toMatch(/request-code/);
    }
    // The address's budget is spent (it used to be 401: the code was killed): 429 even for the right code.
    const spent = await verify({ email, code });
    expect(spent.status).toBe(429);
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('accepts the right code after fewer than 5 wrong tries', async () => {
    const email = fresh('four');
    const code = await requestCode(email);
    for (let i = 0; i < 4; i += 1) expect((await verify({ email, code: wrong(code) })).status).toBe(401);
    expect((await verify({ email, code })).status).toBe(201);
  });

  it('counts wrong tries exactly under concurrency', async () => {
    const email = fresh('race');
    const code = await requestCode(email);
    const results = await Promise.all(Array.from({ length: 5 }, () => verify({ email, code: wrong(code) })));
    expect(results.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    const [row] = await t.deps.database.db.select().from(emailCodes).where(eq(emailCodes.email, email));
    expect(row.attempts).toBe(5);
    expect((await verify({ email, code })).status).toBe(429);
  });

  it('answers 401 for an expired code', async () => {
    const email = fresh('expired');
    const code = await requestCode(email);
    await t.deps.database.db
      .update(emailCodes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(emailCodes.email, email));
    const r = await verify({ email, code });
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
  });

  it('answers 401 for a code of another address, and for an address without a code', async () => {
    const a = fresh('own');
    const code = await requestCode(a);
    expect((await verify({ email: fresh('thief'), code })).status).toBe(401);
    expect((await verify({ email: a, code })).status).toBe(201);
  });

  it('uses a code once only, even when two requests race', async () => {
    const email = fresh('once');
    const code = await requestCode(email);
    const [x, y] = await Promise.all([verify({ email, code }), verify({ email, code })]);
    expect([x.status, y.status].sort()).toEqual([201, 401]);
    expect((await verify({ email, code })).status).toBe(401);
  });

  it("sends an existing user's second key to the same organization and user (created: false)", async () => {
    const email = fresh('again');
    const first = await verify({ email, code: await requestCode(email) });
    const second = await verify({ email, code: await requestCode(email) });
    expect(second.status).toBe(201);
    expect(second.json.user).toEqual({ email, created: false });
    expect(second.json.organization).toEqual(first.json.organization);
    expect(second.json.api_key).not.toBe(first.json.api_key);
    const keys = await t.api('GET', '/v1/api-keys', first.json.api_key);
    expect(keys.json.data.map((k: { key_id: string }) => k.key_id).sort()).toEqual(
      [first.json.key_id, second.json.key_id].sort(),
    );
  });

  it('stores the API key as a sha256 hash, never the secret', async () => {
    const email = fresh('stored');
    const v = await verify({ email, code: await requestCode(email) });
    const secret: string = v.json.api_key;
    const rows = await t.deps.database.rows<Record<string, unknown>>(sql`select * from api_keys`);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice('svc_live_'.length));
    const hash = crypto.createHash('sha256').update(secret).digest('hex');
    const mine = rows.find((r) => r.id === v.json.key_id);
    expect(mine?.hash).toBe(hash);
    expect(String(mine?.prefix)).toMatch(/^svc_live_/);
    expect(secret.startsWith(String(mine?.prefix))).toBe(true);
    expect(String(mine?.prefix).length).toBeLessThan(secret.length - 24);
  });

  it('sign-in and verify-code share the code table: a consumed code is gone for both', async () => {
    const email = fresh('shared');
    const code = await requestCode(email);
    expect((await verify({ email, code })).status).toBe(201);
    const s = await t.request('POST', '/v1/auth/sign-in', { json: { email, code } });
    expect(s.status).toBe(401);
    const rows = await t.deps.database.db
      .select()
      .from(emailCodes)
      .where(and(eq(emailCodes.email, email)));
    expect(rows[0].consumedAt).not.toBeNull();
  });
});

describe('GET /v1/auth/providers', () => {
  it('lists the email-code method', async () => {
    const r = await t.request('GET', '/v1/auth/providers');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ email_code: { sign_in: true, sign_up: true }, social: [] });
  });
});
