import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

/**
 * Cookie-authenticated /v1 requests that change something come from the service's own pages
 * (issue 28, point 5): a same-site page (another port of the host, a sibling subdomain) gets the
 * cookie along, and must not make a signed-in person switch, sign out, or change anything else.
 */
let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;

beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
});
afterAll(() => t.close());

const SERVICE = 'http://127.0.0.1:8787';
const ELSEWHERE = 'http://127.0.0.1:3000';

const withCookie = (method: string, path: string, headers: Record<string, string>, json?: unknown) =>
  t.request(method, path, { headers: { cookie: s.cookie, ...headers }, json });

function expectRefused(r: Awaited<ReturnType<typeof withCookie>>) {
  expect(r.status).toBe(403);
  expect(r.json.error.code).toBe('forbidden');
  expect(r.json.error.hint).toMatch(/X-CSRF-Token|API key/);
}

describe('cookie-authenticated /v1 requests that change something', () => {
  it('refuses another origin, a same-site page, and a request that says nothing', async () => {
    const org = await withCookie('POST', '/v1/organizations', { origin: SERVICE }, { name: 'Target' });
    expect(org.status).toBe(201);
    const path = `/v1/organizations/${org.json.id}/switch`;
    expectRefused(await withCookie('POST', path, { origin: ELSEWHERE, 'sec-fetch-site': 'same-site' }));
    expectRefused(await withCookie('POST', path, { origin: ELSEWHERE }));
    expectRefused(await withCookie('POST', path, { 'sec-fetch-site': 'cross-site' }));
    expectRefused(await withCookie('POST', path, { origin: 'null' }));
    // Neither Origin nor Sec-Fetch-Site, with a token that is not the session's.
    expectRefused(await withCookie('POST', path, { 'x-csrf-token': 'not-the-token' }));
    expectRefused(await withCookie('PATCH', `/v1/organizations/${org.json.id}`, { origin: ELSEWHERE }, { name: 'X' }));
    // Nothing was switched.
    expect((await withCookie('GET', '/v1/me', {})).json.organization.id).not.toBe(org.json.id);
  });

  it("accepts the service's own origin, Sec-Fetch-Site same-origin, or the dashboard's CSRF token", async () => {
    const org = await withCookie('POST', '/v1/organizations', { origin: SERVICE }, { name: 'Mine' });
    const path = `/v1/organizations/${org.json.id}/switch`;
    expect((await withCookie('POST', path, { origin: SERVICE })).status).toBe(200);
    expect((await withCookie('POST', path, { 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect((await withCookie('POST', path, { 'x-csrf-token': s.csrf })).status).toBe(200);
    // Any other token is refused.
    expectRefused(await withCookie('POST', path, { 'x-csrf-token': s.csrf.slice(1) }));
  });

  it('refuses a sign-out from another origin: the session stays', async () => {
    expectRefused(await withCookie('POST', '/v1/auth/sign-out', { origin: ELSEWHERE }));
    expect((await withCookie('GET', '/v1/me', { origin: ELSEWHERE })).status).toBe(200);
  });

  it('leaves reads alone, and bearer keys whatever their origin', async () => {
    expect((await withCookie('GET', '/v1/forms', { origin: ELSEWHERE })).status).toBe(200);
    const r = await t.request('POST', '/v1/projects', {
      key: s.key,
      headers: { origin: ELSEWHERE, 'sec-fetch-site': 'cross-site' },
      json: { name: `p-${crypto.randomUUID().slice(0, 6)}` },
    });
    expect(r.status).toBe(201);
  });

  it('lets a sign-out with the right origin end the session', async () => {
    const other = await dashboardSession(t);
    const out = await t.request('POST', '/v1/auth/sign-out', { headers: { cookie: other.cookie, origin: SERVICE } });
    expect(out.status).toBe(204);
    expect((await t.request('GET', '/v1/me', { headers: { cookie: other.cookie } })).status).toBe(401);
  });
});
