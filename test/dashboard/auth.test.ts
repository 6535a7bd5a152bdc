import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeNext } from '../../server/dashboard/pages/auth.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { csrfOf, dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
beforeAll(async () => {
  // Two codes per address in the window, so the rate limit is reachable in a test.
  t = await startTestApp({ CODE_REQUESTS_PER_ADDRESS: '2' });
});
afterAll(() => t.close());

const cookieOf = (res: { headers: Headers }, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .find((c) => c.startsWith(`${name}=`)) ?? '';

/** A signed-out browser: keeps the pre-session CSRF cookie and whatever session cookie it is given. */
async function visitor(next = '') {
  const first = await t.app.request(`/app/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  expect(first.status).toBe(200);
  const html = await first.text();
  const jar = new Map<string, string>();
  const pre = cookieOf(first, 'formsvc_csrf');
  jar.set('formsvc_csrf', pre);
  const csrf = csrfOf(html);
  const cookie = () => [...jar.values()].filter(Boolean).join('; ');
  async function post(path: string, fields: Record<string, string>, withCsrf = true) {
    const body = new URLSearchParams(fields);
    if (withCsrf) body.set('_csrf', csrf);
    const res = await t.app.request(path, {
      method: 'POST',
      headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
    const session = cookieOf(res, 'formsvc_session');
    if (session) jar.set('formsvc_session', session);
    return { status: res.status, location: res.headers.get('location'), html: await res.text(), headers: res.headers };
  }
  async function get(path: string) {
    const res = await t.app.request(path, { headers: { cookie: cookie() } });
    return { status: res.status, location: res.headers.get('location'), html: await res.text() };
  }
  return { html, csrf, post, get, cookie };
}

async function codeFor(email: string, before: number) {
  const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  return /\b(\d{6})\b/.exec(mail.subject)?.[1] ?? '';
}

const newEmail = () => `p-${crypto.randomUUID().slice(0, 8)}@example.com`;

describe('sign-in page', () => {
  it('signs in with an emailed code and returns to where the visit was going', async () => {
    const gate = await t.app.request('/app/submissions/sb_x?tab=1');
    expect(gate.headers.get('location')).toBe('/app/sign-in?next=%2Fapp%2Fsubmissions%2Fsb_x%3Ftab%3D1');
    const v = await visitor('/app/submissions/sb_x?tab=1');
    expect(v.html).toContain('<label for="email">Email address</label>');
    expect(v.html).toContain('value="/app/submissions/sb_x?tab=1"');
    const email = newEmail();
    const before = t.smtp.messages.length;
    const asked = await v.post('/app/sign-in', {
      email: ` ${email.toUpperCase()} `,
      next: '/app/submissions/sb_x?tab=1',
    });
    expect(asked.status).toBe(303);
    expect(asked.location).toBe(
      `/app/sign-in/code?email=${encodeURIComponent(email)}&next=${encodeURIComponent('/app/submissions/sb_x?tab=1')}`,
    );
    const codePage = await v.get(asked.location ?? '');
    expect(codePage.html).toContain(`<strong>${email}</strong>`);
    const code = await codeFor(email, before);
    const signed = await v.post('/app/sign-in/code', {
      email,
      code: `${code.slice(0, 3)} ${code.slice(3)}`,
      next: '/app/submissions/sb_x?tab=1',
    });
    expect(signed.status).toBe(303);
    expect(signed.location).toBe('/app/submissions/sb_x?tab=1');
    // The same cookie the API sets: HttpOnly, Lax, whole site; and the API accepts it.
    const set = signed.headers.getSetCookie().find((c) => c.startsWith('formsvc_session='));
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Lax/);
    expect(set).toMatch(/Path=\//);
    const inbox = await v.get('/app');
    expect(inbox.status).toBe(200);
    expect(inbox.html).toContain(email);
    const me = await t.app.request('/v1/me', { headers: { cookie: v.cookie() } });
    expect(me.status).toBe(200);
  });

  it('shows a wrong code, a malformed address and too many tries on the page', async () => {
    const v = await visitor();
    const bad = await v.post('/app/sign-in', { email: 'not-an-address' });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('Some fields are not valid.');
    expect(bad.html).toContain('id="email-error"');
    expect(bad.html).toContain('value="not-an-address"');

    const email = newEmail();
    const before = t.smtp.messages.length;
    expect((await v.post('/app/sign-in', { email })).status).toBe(303);
    const code = await codeFor(email, before);
    const wrong = code === '000000' ? '111111' : '000000';
    const r = await v.post('/app/sign-in/code', { email, code: wrong });
    expect(r.status).toBe(400);
    expect(r.html).toContain('The code is wrong or has expired.');
    expect(r.html).toContain('allows 5 tries');
    const shape = await v.post('/app/sign-in/code', { email, code: '12' });
    expect(shape.status).toBe(422);
    expect(shape.html).toContain('id="code-error"');
    for (let i = 0; i < 4; i++) await v.post('/app/sign-in/code', { email, code: wrong });
    // Five tries are spent: even the right code is refused now (the address's budget: 429, how long to wait).
    const late = await v.post('/app/sign-in/code', { email, code });
    expect(late.status).toBe(429);
    expect(late.html).toContain('Too many wrong codes for this address.');
    expect(late.html).toMatch(/Wait \d+ (seconds|minutes), then try again\./);
    expect(late.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await v.get('/app')).status).toBe(303);
  });

  it('checks the code before it ends the current session: a wrong code leaves the person signed in', async () => {
    const s = await dashboardSession(t);
    // (This file allows two codes per address, both spent by dashboardSession: no live code is left.)
    const r = await s.post('/app/sign-in/code', { email: s.email, code: '000000' });
    expect(r.status).toBe(400);
    expect(r.html).toContain('The code is wrong or has expired.');
    expect(r.headers.getSetCookie().some((c) => c.startsWith('formsvc_session='))).toBe(false);
    expect((await s.get('/app')).status).toBe(200);
    expect((await t.app.request('/v1/me', { headers: { cookie: s.cookie } })).status).toBe(200);
  });

  it('shows the rate limit with how long to wait', async () => {
    const v = await visitor();
    const email = newEmail();
    expect((await v.post('/app/sign-in', { email })).status).toBe(303);
    expect((await v.post('/app/sign-in', { email })).status).toBe(303);
    const third = await v.post('/app/sign-in', { email });
    expect(third.status).toBe(429);
    expect(third.html).toContain('Too many code requests; wait before asking again.');
    expect(third.html).toMatch(/Wait \d+ (seconds|minutes), then ask for a new code\./);
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('refuses a sign-in form without its CSRF token', async () => {
    const v = await visitor();
    const before = t.smtp.messages.length;
    const r = await v.post('/app/sign-in', { email: newEmail() }, false);
    expect(r.status).toBe(403);
    expect(t.smtp.messages.length).toBe(before);
  });

  it('never redirects off /app after signing in', async () => {
    for (const next of [
      'https://evil.example/app',
      '//evil.example/app',
      '/\\evil.example',
      '/app.evil.example',
      '/appx',
      '/app/../v1/me',
      '/app/%2e%2e/v1',
      'javascript:alert(1)',
      '/app\r\nLocation: https://evil.example',
      '/app/sign-in?next=//evil.example',
    ]) {
      expect(safeNext(next), next).toMatch(/^\/app(\/|$)/);
      expect(safeNext(next), next).not.toContain('evil');
    }
    expect(safeNext('/app/forms?tag=a')).toBe('/app/forms?tag=a');
    expect(safeNext('/app')).toBe('/app');
    // Through the pages: a hostile next ends at /app.
    const v = await visitor('https://evil.example/');
    expect(v.html).toContain('name="next" value="/app"');
    const email = newEmail();
    const before = t.smtp.messages.length;
    await v.post('/app/sign-in', { email, next: '//evil.example' });
    const code = await codeFor(email, before);
    const r = await v.post('/app/sign-in/code', { email, code, next: '//evil.example/x' });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/app');
  });
});

describe('sign-out and organizations', () => {
  it('ends the session on the server: the old cookie no longer opens /app or the API', async () => {
    const s = await dashboardSession(t);
    expect((await s.get('/app')).status).toBe(200);
    const out = await s.post('/app/sign-out', {});
    expect(out.status).toBe(303);
    expect(out.location).toMatch(/^\/app\/sign-in\?notice=/);
    expect(out.headers.getSetCookie().some((c) => /^formsvc_session=;/.test(c) || /Max-Age=0/.test(c))).toBe(true);
    const after = await s.get('/app');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/app/sign-in?next=%2Fapp');
    const api = await t.app.request('/v1/me', { headers: { cookie: s.cookie } });
    expect(api.status).toBe(401);
  });

  it('switches to another organization of the person, and not to someone else’s', async () => {
    const s = await dashboardSession(t);
    const created = await t.api('POST', '/v1/organizations', s.key, { json: { name: 'Second <b>Team</b>' } });
    expect(created.status).toBe(201);
    const inbox = await s.get('/app');
    expect(inbox.html).toContain('<label for="org_id">Organization</label>');
    expect(inbox.html).toContain('Second &lt;b&gt;Team&lt;/b&gt;');
    const sw = await s.post('/app/switch-org', { org_id: created.json.id });
    expect(sw.status).toBe(303);
    expect(sw.location).toMatch(/^\/app\?notice=/);
    const me = await t.app.request('/v1/me', { headers: { cookie: s.cookie } });
    expect(((await me.json()) as { organization: { id: string } }).organization.id).toBe(created.json.id);

    const other = await t.onboard();
    const foreign = await s.post('/app/switch-org', { org_id: other.verify.organization.id });
    expect(foreign.status).toBe(404);
    expect(foreign.html).toContain('was not found');
    const noToken = await s.post('/app/switch-org', { org_id: created.json.id }, { csrf: false });
    expect(noToken.status).toBe(403);
  });
});
