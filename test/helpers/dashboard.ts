import crypto from 'node:crypto';
import type { TestEnv } from './app.js';

/** The value of the first `_csrf` field of a page. */
export const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/**
 * A signed-in dashboard visitor, in process: onboards `email` (an organization and a manage key),
 * signs in with a fresh email code through POST /v1/auth/sign-in and keeps the session cookie.
 * `get` and `post` send it; `post` adds the page's CSRF token unless `csrf: false`.
 */
export async function dashboardSession(t: TestEnv, email = `d-${crypto.randomUUID().slice(0, 8)}@example.com`) {
  const who = await t.onboard(email);
  const before = t.smtp.messages.length;
  const rc = await t.request('POST', '/v1/auth/request-code', { json: { email } });
  if (rc.status !== 200) throw new Error(`request-code: ${rc.status} ${rc.text}`);
  const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(who.email));
  const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
  const s = await t.request('POST', '/v1/auth/sign-in', { json: { email, code } });
  if (s.status !== 200) throw new Error(`sign-in: ${s.status} ${s.text}`);
  const cookie = (s.headers.get('set-cookie') ?? '').split(';')[0];
  const first = await t.app.request('/app', { headers: { cookie } });
  const csrf = csrfOf(await first.text());
  if (!csrf) throw new Error('the inbox page has no CSRF field');

  async function get(path: string) {
    const res = await t.app.request(path, { headers: { cookie } });
    return { status: res.status, headers: res.headers, html: await res.text() };
  }
  async function post(path: string, fields: Record<string, string | string[]>, opts: { csrf?: boolean } = {}) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    if (opts.csrf !== false) body.set('_csrf', csrf);
    const res = await t.app.request(path, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: body.toString(),
    });
    return { status: res.status, headers: res.headers, html: await res.text(), location: res.headers.get('location') };
  }
  return { ...who, cookie, csrf, get, post };
}
