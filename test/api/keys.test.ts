import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';

let t: TestEnv;

/** Email code → POST /v1/auth/sign-in; returns the answer and the Cookie header value to send back. */
async function signIn(email = `s-${crypto.randomUUID().slice(0, 8)}@example.com`) {
  const before = t.smtp.messages.length;
  expect((await t.request('POST', '/v1/auth/request-code', { json: { email } })).status).toBe(200);
  const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  const r = await t.request('POST', '/v1/auth/sign-in', { json: { email, code } });
  expect(r.status).toBe(200);
  const setCookie = r.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0];
  return { r, setCookie, cookie, email, code: code as string };
}

const withCookie = (cookie: string) => ({ headers: { cookie } });

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('API keys', () => {
  it('lists key_id, prefix, name and scopes but never the secret', async () => {
    const a = await t.onboard();
    const list = await t.api('GET', '/v1/api-keys', a.key);
    expect(list.status).toBe(200);
    expect(list.json.next_cursor).toBeNull();
    expect(list.json.data).toHaveLength(1);
    const k = list.json.data[0];
    expect(k).toMatchObject({ key_id: a.verify.key_id, scopes: ['manage'], created_by: { email: a.email } });
    expect(a.key.startsWith(k.prefix)).toBe(true);
    expect(k.prefix).toMatch(/^svc_live_/);
    expect(list.text).not.toContain(a.key);
    expect(list.text).not.toContain(a.key.slice(k.prefix.length));
    expect(k).not.toHaveProperty('api_key');
    expect(k).not.toHaveProperty('hash');
    const one = await t.api('GET', `/v1/api-keys/${k.key_id}`, a.key);
    expect(one.status).toBe(200);
    expect(one.text).not.toContain(a.key);
    expect(one.json.key_id).toBe(k.key_id);
  });

  it('revokes a key with DELETE: it answers 401 at once and leaves the list', async () => {
    const a = await t.onboard();
    const b = await t.onboard(a.email, { key_name: 'second' });
    expect((await t.api('GET', '/v1/me', b.key)).status).toBe(200);
    const del = await t.api('DELETE', `/v1/api-keys/${b.verify.key_id}`, a.key);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const after = await t.api('GET', '/v1/me', b.key);
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('unauthorized');
    const list = await t.api('GET', '/v1/api-keys', a.key);
    expect(list.json.data.map((k: { key_id: string }) => k.key_id)).toEqual([a.verify.key_id]);
    expect((await t.api('GET', `/v1/api-keys/${b.verify.key_id}`, a.key)).status).toBe(404);
    expect((await t.api('DELETE', `/v1/api-keys/${b.verify.key_id}`, a.key)).status).toBe(404);
  });

  it('needs a manage key to revoke', async () => {
    const a = await t.onboard();
    const ro = await t.onboard(a.email, { scopes: ['read'] });
    const r = await t.api('DELETE', `/v1/api-keys/${a.verify.key_id}`, ro.key);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('forbidden');
    expect((await t.api('GET', '/v1/me', a.key)).status).toBe(200);
  });

  it('answers 404 for another organization key id on GET and DELETE', async () => {
    const a = await t.onboard();
    const b = await t.onboard();
    const get = await t.api('GET', `/v1/api-keys/${a.verify.key_id}`, b.key);
    expect(get.status).toBe(404);
    expect(get.json.error.code).toBe('not_found');
    expect((await t.api('DELETE', `/v1/api-keys/${a.verify.key_id}`, b.key)).status).toBe(404);
    expect((await t.api('GET', '/v1/me', a.key)).status).toBe(200);
    const list = await t.api('GET', '/v1/api-keys', b.key);
    expect(list.text).not.toContain(a.verify.key_id);
  });

  it('refuses POST /v1/api-keys with a Bearer key (403), and without credentials (401)', async () => {
    const a = await t.onboard();
    const r = await t.api('POST', '/v1/api-keys', a.key, { json: { name: 'ci' } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('forbidden');
    expect(r.json.error.hint).toMatch(/sign-in/);
    expect((await t.api('POST', '/v1/api-keys', null, { json: { name: 'ci' } })).status).toBe(401);
    const bogus = await t.api('POST', '/v1/api-keys', 'svc_live_nope', { json: { name: 'ci' } });
    expect(bogus.status).toBe(401);
    expect(
      (await t.api('POST', '/v1/api-keys', null, { json: { name: 'ci' }, ...withCookie('formsvc_session=nope') }))
        .status,
    ).toBe(401);
  });

  it('mints a key with a session cookie; the key works with exactly its scopes', async () => {
    const s = await signIn();
    expect(s.r.json).toMatchObject({
      user: { email: s.email, created: true, id: expect.stringMatching(/^usr_/) },
      organization: { id: expect.stringMatching(/^org_/) },
      expires_at: expect.stringMatching(/Z$/),
    });
    const created = await t.request('POST', '/v1/api-keys', {
      json: { name: 'ci', scopes: ['submit'] },
      ...withCookie(s.cookie),
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      key_id: expect.stringMatching(/^key_/),
      name: 'ci',
      scopes: ['submit'],
      api_key: expect.stringMatching(/^svc_live_[A-Za-z0-9]{32,}$/),
      created_by: { id: s.r.json.user.id, email: s.email },
    });
    const key = created.json.api_key;
    const me = await t.api('GET', '/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.json.organization.id).toBe(s.r.json.organization.id);
    expect(me.json.key).toEqual({ prefix: created.json.prefix, scopes: ['submit'] });
    expect((await t.api('GET', '/v1/forms', key)).status).toBe(403);
    // Default scope is manage.
    const full = await t.request('POST', '/v1/api-keys', { json: { name: 'full' }, ...withCookie(s.cookie) });
    expect(full.json.scopes).toEqual(['manage']);
    expect((await t.api('POST', '/v1/projects', full.json.api_key, { json: { name: 'Via session key' } })).status).toBe(
      201,
    );
    // The secret is shown once: listing shows neither secret.
    const list = await t.request('GET', '/v1/api-keys', withCookie(s.cookie));
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(2);
    expect(list.text).not.toContain(key);
    expect(list.text).not.toContain(full.json.api_key);
  });

  it('validates the create body', async () => {
    const s = await signIn();
    for (const json of [
      {},
      { name: '' },
      { name: 'x'.repeat(33) },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['root'] },
    ]) {
      const r = await t.request('POST', '/v1/api-keys', { json, ...withCookie(s.cookie) });
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });

  it('sets the session cookie HttpOnly, SameSite=Lax, not Secure on http', async () => {
    const s = await signIn();
    expect(s.setCookie).toMatch(/^formsvc_session=[A-Za-z0-9]{32,};/);
    expect(s.setCookie).toMatch(/;\s*HttpOnly/i);
    expect(s.setCookie).toMatch(/;\s*SameSite=Lax/i);
    expect(s.setCookie).toMatch(/;\s*Path=\//i);
    expect(s.setCookie).not.toMatch(/;\s*Secure/i);
    // The session token is stored hashed.
    const token = s.cookie.split('=')[1];
    const rows =
      await t.deps.database.rows<Record<string, unknown>>((await import('drizzle-orm')).sql`select * from sessions`);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('sets the cookie Secure when the public base URL is https', async () => {
    const secure = await startTestApp({ PUBLIC_BASE_URL: 'https://forms.example.com' });
    const prev = t;
    t = secure;
    try {
      const s = await signIn();
      expect(s.setCookie).toMatch(/;\s*Secure/i);
      expect(s.setCookie).toMatch(/;\s*HttpOnly/i);
    } finally {
      t = prev;
      await secure.close();
    }
  });

  it('ends the session with sign-out', async () => {
    const s = await signIn();
    expect((await t.request('GET', '/v1/me', withCookie(s.cookie))).status).toBe(200);
    const out = await t.request('POST', '/v1/auth/sign-out', withCookie(s.cookie));
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/formsvc_session=;/);
    const after = await t.request('GET', '/v1/me', withCookie(s.cookie));
    expect(after.status).toBe(401);
    expect((await t.request('POST', '/v1/api-keys', { json: { name: 'late' }, ...withCookie(s.cookie) })).status).toBe(
      401,
    );
  });

  it('a session sees its organization with role owner on /v1/me', async () => {
    const s = await signIn();
    const me = await t.request('GET', '/v1/me', withCookie(s.cookie));
    expect(me.json.organizations).toEqual([
      {
        id: s.r.json.organization.id,
        slug: s.r.json.organization.slug,
        name: s.r.json.organization.name,
        role: 'owner',
        is_active: true,
      },
    ]);
    expect(me.json.key).toEqual({ scopes: ['manage'] });
  });

  it('a session and a key of the same user land in the same organization', async () => {
    const a = await t.onboard();
    const s = await signIn(a.email);
    expect(s.r.json.user.created).toBe(false);
    expect(s.r.json.organization.id).toBe(a.verify.organization.id);
  });

  it('paginates keys and rejects a bad cursor or limit', async () => {
    const a = await t.onboard();
    for (let i = 0; i < 3; i += 1) await t.onboard(a.email, { key_name: `k${i}` });
    const p1 = await t.api('GET', '/v1/api-keys?limit=2', a.key);
    expect(p1.json.data).toHaveLength(2);
    expect(p1.json.next_cursor).toBe(p1.json.data[1].key_id);
    const p2 = await t.api('GET', `/v1/api-keys?limit=2&cursor=${p1.json.next_cursor}`, a.key);
    expect(p2.json.data).toHaveLength(2);
    expect(p2.json.next_cursor).toBeNull();
    const ids = [...p1.json.data, ...p2.json.data].map((k: { key_id: string }) => k.key_id);
    expect(new Set(ids).size).toBe(4);
    expect((await t.api('GET', '/v1/api-keys?cursor=prj_nope', a.key)).status).toBe(422);
    expect((await t.api('GET', '/v1/api-keys?limit=500', a.key)).status).toBe(422);
  });
});

describe('scopes: manage ⊃ read ⊃ submit', () => {
  let manage: string;
  let read: string;
  let submit: string;
  beforeAll(async () => {
    const a = await t.onboard();
    manage = a.key;
    read = (await t.onboard(a.email, { scopes: ['read'] })).key;
    submit = (await t.onboard(a.email, { scopes: ['submit'] })).key;
  });

  it('a submit key can GET /v1/me but not list forms', async () => {
    const me = await t.api('GET', '/v1/me', submit);
    expect(me.status).toBe(200);
    expect(me.json.key.scopes).toEqual(['submit']);
    const r = await t.api('GET', '/v1/forms', submit);
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/read/) });
    expect((await t.api('GET', '/v1/api-keys', submit)).status).toBe(403);
    expect((await t.api('POST', '/v1/forms', submit, { json: { name: 'x' } })).status).toBe(403);
  });

  it('a read key can list and read, and gets 403 on writes', async () => {
    expect((await t.api('GET', '/v1/me', read)).status).toBe(200);
    expect((await t.api('GET', '/v1/forms', read)).status).toBe(200);
    expect((await t.api('GET', '/v1/projects', read)).status).toBe(200);
    expect((await t.api('GET', '/v1/api-keys', read)).status).toBe(200);
    const post = await t.api('POST', '/v1/forms', read, { json: { name: 'x' } });
    expect(post.status).toBe(403);
    expect(post.json.error.code).toBe('forbidden');
    expect((await t.api('POST', '/v1/projects', read, { json: { name: 'x' } })).status).toBe(403);
  });

  it('a manage key does everything a read and a submit key can', async () => {
    expect((await t.api('GET', '/v1/me', manage)).status).toBe(200);
    expect((await t.api('GET', '/v1/forms', manage)).status).toBe(200);
    expect((await t.api('POST', '/v1/forms', manage, { json: { name: 'Scoped' } })).status).toBe(201);
  });

  it('answers 401 for a missing, malformed or unknown credential', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer svc_live_unknown' },
    ]) {
      const r = await t.request('GET', '/v1/me', { headers });
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
      expect(r.json.error.hint).toMatch(/Bearer/);
    }
  });
});
