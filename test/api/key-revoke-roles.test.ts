import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { csrfOf } from '../helpers/dashboard.js';
import { type Session, signIn } from '../helpers/session.js';

/** Revoking an API key takes what minting one takes: an owner or admin (issue 28, point 4). */
let t: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const fresh = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const as = (s: Session, method: string, path: string, json?: unknown) =>
  t.request(method, path, { headers: { cookie: s.cookie }, ...(json === undefined ? {} : { json }) });

/** An owner's team organization with a member and an admin, each signed in there, and the owner's key. */
async function team() {
  const owner = await signIn(t);
  const org = await as(owner, 'POST', '/v1/organizations', { name: 'Keys Team' });
  expect((await as(owner, 'POST', `/v1/organizations/${org.json.id}/switch`)).status).toBe(200);
  const join = async (role: 'admin' | 'member') => {
    const inv = await as(owner, 'POST', '/v1/invitations', { email: fresh(role), role });
    const s = await signIn(t, inv.json.email);
    expect((await as(s, 'POST', `/v1/invitations/${inv.json.id}/accept`)).status).toBe(200);
    expect((await as(s, 'POST', `/v1/organizations/${org.json.id}/switch`)).status).toBe(200);
    return s;
  };
  const member = await join('member');
  const admin = await join('admin');
  const key = await as(owner, 'POST', '/v1/api-keys', { name: 'owner-ci', scopes: ['manage'] });
  expect(key.status).toBe(201);
  return { owner, member, admin, key: key.json as { key_id: string; api_key: string } };
}

describe('DELETE /v1/api-keys/{id}', () => {
  it("refuses a member's session with 403: the owner's key keeps working", async () => {
    const { member, key } = await team();
    const r = await as(member, 'DELETE', `/v1/api-keys/${key.key_id}`);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('forbidden');
    expect(r.json.error.hint).toBeTruthy();
    expect((await t.api('GET', '/v1/me', key.api_key)).status).toBe(200);
  });

  it("lets an admin's session, an owner's session and a manage key revoke", async () => {
    const { owner, admin, key } = await team();
    expect((await as(admin, 'DELETE', `/v1/api-keys/${key.key_id}`)).status).toBe(204);
    expect((await t.api('GET', '/v1/me', key.api_key)).status).toBe(401);
    const second = await as(owner, 'POST', '/v1/api-keys', { name: 'two', scopes: ['read'] });
    expect((await as(owner, 'DELETE', `/v1/api-keys/${second.json.key_id}`)).status).toBe(204);
    const third = await as(owner, 'POST', '/v1/api-keys', { name: 'three', scopes: ['manage'] });
    const fourth = await as(owner, 'POST', '/v1/api-keys', { name: 'four', scopes: ['read'] });
    expect((await t.api('DELETE', `/v1/api-keys/${fourth.json.key_id}`, third.json.api_key)).status).toBe(204);
  });
});

describe('the dashboard keys page', () => {
  it('shows a member no Revoke button and refuses their revoke post', async () => {
    const { member, admin, key } = await team();
    const page = await t.app.request('/app/keys', { headers: { cookie: member.cookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('owner-ci');
    expect(html).not.toContain(`/app/keys/${key.key_id}/revoke`);
    const post = (s: Session, csrf: string) =>
      t.app.request(`/app/keys/${key.key_id}/revoke`, {
        method: 'POST',
        headers: {
          cookie: s.cookie,
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-origin',
        },
        body: new URLSearchParams({ _csrf: csrf }).toString(),
      });
    const refused = await post(member, csrfOf(html));
    expect(refused.status).toBe(403);
    expect((await t.api('GET', '/v1/me', key.api_key)).status).toBe(200);
    // An admin sees the button and may use it.
    const adminHtml = await (await t.app.request('/app/keys', { headers: { cookie: admin.cookie } })).text();
    expect(adminHtml).toContain(`/app/keys/${key.key_id}/revoke`);
    expect((await post(admin, csrfOf(adminHtml))).status).toBe(303);
    expect((await t.api('GET', '/v1/me', key.api_key)).status).toBe(401);
  });
});
