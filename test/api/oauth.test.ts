import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { csrfOf } from '../helpers/dashboard.js';
import { type Session, signIn } from '../helpers/session.js';

/**
 * The OAuth 2.1 server in process (PGlite, or TEST_DATABASE_URL's PostgreSQL): metadata, the 401
 * challenge, registration, the consent page's answers, the token endpoint's rules and refusals,
 * and what a token may do. The whole flow with the MCP SDK's client and Chromium is
 * test/browser/oauth.test.ts.
 */
let t: TestEnv;
const BASE = 'http://127.0.0.1:8787';
const CB = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const fresh = (tag = 'o') => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;

async function raw(
  method: string,
  path: string,
  init: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  } else if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  const res = await t.app.request(path, { method, headers, body });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, json, location: res.headers.get('location') };
}

async function register(redirect = CB) {
  const r = await raw('POST', '/oauth/register', {
    json: { redirect_uris: [redirect], client_name: 'Test <agent>', token_endpoint_auth_method: 'none' },
  });
  expect(r.status, r.text).toBe(201);
  return r.json.client_id as string;
}

function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

/** An authorization request for the read scope, PKCE S256, to CB. */
const readRequest = (clientId: string, challenge: string): Record<string, string> => ({
  client_id: clientId,
  redirect_uri: CB,
  response_type: 'code',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  scope: 'read',
});

const authorizeUrl = (p: Record<string, string>) => `/app/oauth/authorize?${new URLSearchParams(p).toString()}`;

/** The consent page signed in as `s`, then its form posted with `decision`; returns the redirect. */
async function consent(
  s: Session,
  p: Record<string, string>,
  opts: { orgId?: string; scope?: string; decision?: string } = {},
) {
  const page = await t.app.request(authorizeUrl(p), { headers: { cookie: s.cookie } });
  const html = await page.text();
  expect(page.status, html).toBe(200);
  const fields = new URLSearchParams({ ...p, _csrf: csrfOf(html), decision: opts.decision ?? 'approve' });
  fields.set('org_id', opts.orgId ?? s.personal.id);
  fields.set('grant_scope', opts.scope ?? (p.scope ?? 'read').split(' ').pop() ?? 'read');
  const res = await t.app.request('/app/oauth/authorize', {
    method: 'POST',
    headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: fields.toString(),
  });
  expect(res.status, await res.clone().text()).toBe(303);
  return new URL(res.headers.get('location') as string);
}

/** Registration, consent and the code exchange: the token answer. */
async function connect(s: Session, opts: { orgId?: string; scope?: string; resource?: string } = {}) {
  const clientId = await register();
  const { verifier, challenge } = pkce();
  const back = await consent(
    s,
    {
      client_id: clientId,
      redirect_uri: CB,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: opts.scope ?? 'manage',
      resource: opts.resource ?? `${BASE}/mcp`,
      state: 'st-1',
    },
    opts,
  );
  expect(back.searchParams.get('state')).toBe('st-1');
  expect(back.searchParams.get('iss')).toBe(BASE);
  const code = back.searchParams.get('code') as string;
  const r = await raw('POST', '/oauth/token', {
    form: { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: CB, code_verifier: verifier },
  });
  expect(r.status, r.text).toBe(200);
  return { ...(r.json as { access_token: string; refresh_token: string; scope: string }), clientId, code, verifier };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('discovery', () => {
  it('answers 401 on /v1 and /mcp with the resource metadata (the /v1 body is unchanged)', async () => {
    const v1 = await raw('GET', '/v1/forms');
    expect(v1.status).toBe(401);
    expect(v1.json.error).toMatchObject({ code: 'unauthorized' });
    expect(v1.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource"`,
    );
    const badKey = await raw('GET', '/v1/forms', { headers: bearer('fso_at_nothing') });
    expect(badKey.status).toBe(401);
    expect(badKey.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const prm = await raw('GET', '/.well-known/oauth-protected-resource/mcp');
    expect(prm.json).toMatchObject({
      resource: `${BASE}/mcp`,
      authorization_servers: [BASE],
      scopes_supported: ['submit', 'read', 'manage'],
    });
    expect((await raw('GET', '/.well-known/oauth-protected-resource')).json.resource).toBe(BASE);
    const as = await raw('GET', '/.well-known/oauth-authorization-server');
    expect(as.json).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/app/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
    });
  });
});

describe('registration (RFC 7591)', () => {
  it('takes https and loopback http redirect URIs, refuses others with invalid_redirect_uri', async () => {
    for (const ok of ['https://agent.example.com/cb', 'http://127.0.0.1:33418/cb', 'http://localhost/cb']) {
      const r = await raw('POST', '/oauth/register', { json: { redirect_uris: [ok] } });
      expect(r.status, ok).toBe(201);
      expect(r.json).toMatchObject({ redirect_uris: [ok], token_endpoint_auth_method: 'none' });
      expect(r.json.client_secret).toBeUndefined();
    }
    for (const bad of ['http://agent.example.com/cb', 'javascript:alert(1)', 'https://a.example/cb#x', 'not a url']) {
      const r = await raw('POST', '/oauth/register', { json: { redirect_uris: [bad] } });
      expect(r.status, bad).toBe(400);
      expect(r.json.error).toBe('invalid_redirect_uri');
      expect(r.json.hint).toBeTruthy();
    }
    const secret = await raw('POST', '/oauth/register', {
      json: { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_basic' },
    });
    expect(secret.json.error).toBe('invalid_client_metadata');
  });
});

describe('authorization and token', () => {
  let s: Session;
  beforeAll(async () => {
    s = await signIn(t, fresh('a'));
  });

  it('shows the client, the redirect host and the scope; refuses an unregistered redirect_uri on the page', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const p = readRequest(clientId, challenge);
    const page = await t.app.request(authorizeUrl(p), { headers: { cookie: s.cookie } });
    const html = await page.text();
    expect(html).toContain('Test &lt;agent&gt;');
    expect(html).toContain('127.0.0.1:9');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9;");

    const wrong = await t.app.request(authorizeUrl({ ...p, redirect_uri: 'https://evil.example/cb' }), {
      headers: { cookie: s.cookie },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('location')).toBeNull();
    expect(await wrong.text()).toContain('not one the client registered');

    const signedOut = await t.app.request(authorizeUrl(p));
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`/app/sign-in?next=${encodeURIComponent(authorizeUrl(p))}`);

    const noPkce = await t.app.request(authorizeUrl({ ...p, code_challenge_method: 'plain' }), {
      headers: { cookie: s.cookie },
    });
    expect(noPkce.status).toBe(303);
    expect(new URL(noPkce.headers.get('location') as string).searchParams.get('error')).toBe('invalid_request');

    const elsewhere = await t.app.request(authorizeUrl({ ...p, resource: 'https://other.example/mcp' }), {
      headers: { cookie: s.cookie },
    });
    expect(new URL(elsewhere.headers.get('location') as string).searchParams.get('error')).toBe('invalid_target');

    const denied = await consent(s, p, { decision: 'deny' });
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('code')).toBeNull();
  });

  it('refuses a missing or wrong PKCE verifier, a wrong redirect_uri, and a code used twice (revoking its tokens)', async () => {
    const clientId = await register();
    const { verifier, challenge } = pkce();
    const p = readRequest(clientId, challenge);
    const code = (await consent(s, p)).searchParams.get('code') as string;
    const base = { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: CB };

    const missing = await raw('POST', '/oauth/token', { form: base });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toBe('invalid_request');
    const wrong = await raw('POST', '/oauth/token', { form: { ...base, code_verifier: pkce().verifier } });
    expect(wrong.json.error).toBe('invalid_grant');
    const otherUri = await raw('POST', '/oauth/token', {
      form: { ...base, redirect_uri: 'http://127.0.0.1:9/other', code_verifier: verifier },
    });
    expect(otherUri.json.error).toBe('invalid_grant');

    const ok = await raw('POST', '/oauth/token', { form: { ...base, code_verifier: verifier } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect(ok.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read' });
    expect((await raw('GET', '/v1/forms', { headers: bearer(ok.json.access_token) })).status).toBe(200);

    const again = await raw('POST', '/oauth/token', { form: { ...base, code_verifier: verifier } });
    expect(again.status).toBe(400);
    expect(again.json.error).toBe('invalid_grant');
    expect((await raw('GET', '/v1/forms', { headers: bearer(ok.json.access_token) })).status).toBe(401);
  });

  it('binds the resource: a token for /v1 works there and is refused at /mcp', async () => {
    const tok = await connect(s, { resource: `${BASE}/v1`, scope: 'read' });
    expect((await raw('GET', '/v1/me', { headers: bearer(tok.access_token) })).status).toBe(200);
    const mcp = await raw('POST', '/mcp', {
      json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { ...bearer(tok.access_token), accept: 'application/json, text/event-stream' },
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp');
    const asked = await raw('POST', '/oauth/token', {
      form: {
        grant_type: 'refresh_token',
        refresh_token: tok.refresh_token,
        client_id: tok.clientId,
        resource: `${BASE}/mcp`,
      },
    });
    expect(asked.json.error).toBe('invalid_target');
  });

  it('rotates refresh tokens; a reused one revokes the whole family and is logged', async () => {
    const first = await connect(s, { scope: 'read' });
    const r1 = await raw('POST', '/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: first.clientId },
    });
    expect(r1.status, r1.text).toBe(200);
    expect(r1.json.refresh_token).not.toBe(first.refresh_token);
    expect((await raw('GET', '/v1/forms', { headers: bearer(r1.json.access_token) })).status).toBe(200);

    const reused = await raw('POST', '/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: first.clientId },
    });
    expect(reused.status).toBe(400);
    expect(reused.json.error).toBe('invalid_grant');
    expect((await raw('GET', '/v1/forms', { headers: bearer(r1.json.access_token) })).status).toBe(401);
    const next = await raw('POST', '/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: r1.json.refresh_token, client_id: first.clientId },
    });
    expect(next.json.error).toBe('invalid_grant');

    const log = await t.request('GET', '/v1/events?type=oauth.revoked', { headers: { cookie: s.cookie } });
    expect(log.status, log.text).toBe(200);
    expect(log.json.data.some((e: any) => e.data.reason === 'refresh_reused')).toBe(true);
    const granted = await t.request('GET', '/v1/events?type=oauth.granted', { headers: { cookie: s.cookie } });
    expect(granted.json.data[0].data).toMatchObject({ client_name: 'Test <agent>', scopes: ['read'] });
  });

  it('revokes by RFC 7009 and from the Team › API keys page', async () => {
    const a = await connect(s, { scope: 'read' });
    const r = await raw('POST', '/oauth/revoke', { form: { token: a.access_token, client_id: a.clientId } });
    expect(r.status).toBe(200);
    expect((await raw('GET', '/v1/forms', { headers: bearer(a.access_token) })).status).toBe(401);
    expect((await raw('POST', '/oauth/revoke', { form: { token: 'fso_at_unknown' } })).status).toBe(200);

    const b = await connect(s, { scope: 'read' });
    expect((await raw('GET', '/v1/forms', { headers: bearer(b.access_token) })).status).toBe(200);
    const keys = await t.app.request('/app/keys', { headers: { cookie: s.cookie } });
    const html = await keys.text();
    expect(html).toContain('Connected applications');
    const action = /action="(\/app\/oauth\/grants\/[^"]+\/revoke)"/.exec(html)?.[1] as string;
    expect(action).toBeTruthy();
    const res = await t.app.request(action, {
      method: 'POST',
      headers: {
        cookie: s.cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ _csrf: csrfOf(html) }).toString(),
    });
    expect(res.status).toBe(303);
    expect((await raw('GET', '/v1/forms', { headers: bearer(b.access_token) })).status).toBe(401);
  });
});

describe('what a token may do', () => {
  it("acts with its person's role: a member's manage token cannot revoke keys (403); another organization's ids are 404", async () => {
    const owner = await signIn(t, fresh('own'));
    const ownerKey = await t.request('POST', '/v1/api-keys', {
      headers: { cookie: owner.cookie },
      json: { name: 'ci', scopes: ['read'] },
    });
    expect(ownerKey.status, ownerKey.text).toBe(201);
    const inv = await t.request('POST', '/v1/invitations', {
      headers: { cookie: owner.cookie },
      json: { email: fresh('mem'), role: 'member' },
    });
    expect(inv.status, inv.text).toBe(201);
    const member = await signIn(t, inv.json.email);
    expect(
      (await t.request('POST', `/v1/invitations/${inv.json.id}/accept`, { headers: { cookie: member.cookie } })).status,
    ).toBe(200);

    const tok = await connect(member, { orgId: owner.personal.id, scope: 'manage' });
    const me = await raw('GET', '/v1/forms', { headers: bearer(tok.access_token) });
    expect(me.status).toBe(200);
    const denied = await raw('DELETE', `/v1/api-keys/${ownerKey.json.id}`, { headers: bearer(tok.access_token) });
    expect(denied.status).toBe(403);
    expect(denied.json.error.hint).toBeTruthy();
    const sessionOnly = await raw('POST', '/v1/api-keys', {
      headers: bearer(tok.access_token),
      json: { name: 'x', scopes: ['read'] },
    });
    expect(sessionOnly.status).toBe(403);

    // The owner's form is visible to the member's token; a form of another organization is a 404.
    const form = await t.request('POST', '/v1/forms', { headers: { cookie: owner.cookie }, json: { name: 'Owned' } });
    expect((await raw('GET', `/v1/forms/${form.json.id}`, { headers: bearer(tok.access_token) })).status).toBe(200);
    const stranger = await signIn(t, fresh('x'));
    const theirs = await t.request('POST', '/v1/forms', {
      headers: { cookie: stranger.cookie },
      json: { name: 'Theirs' },
    });
    const other = await raw('GET', `/v1/forms/${theirs.json.id}`, { headers: bearer(tok.access_token) });
    expect(other.status).toBe(404);

    // A person cannot grant an organization they are not a member of.
    const clientId = await register();
    const { challenge } = pkce();
    const page = await t.app.request(
      authorizeUrl({
        client_id: clientId,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      { headers: { cookie: member.cookie } },
    );
    const html = await page.text();
    const res = await t.app.request('/app/oauth/authorize', {
      method: 'POST',
      headers: {
        cookie: member.cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        _csrf: csrfOf(html),
        decision: 'approve',
        org_id: stranger.personal.id,
        grant_scope: 'read',
      }).toString(),
    });
    expect(res.status).toBe(404);
  });
});
