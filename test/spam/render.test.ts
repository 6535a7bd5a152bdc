import { describe, expect, it } from 'vitest';
import { issueRenderToken, renderAgeS, renderTokenKey } from '../../server/spam/render-token.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, otherKey } = await tenantApp();
let ipSeq = 0;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function form(apiKey = key) {
  const f = await t.api('POST', '/v1/forms', apiKey, { json: { name: `Render ${Math.random()}` } });
  expect(f.status).toBe(201);
  return f.json.id as string;
}

/** A visitor's post: a fresh address each, a browser's User-Agent, distinct text (no velocity). */
function post(formId: string, extra: Record<string, unknown> = {}) {
  ipSeq += 1;
  return t.request('POST', `/s/${formId}`, {
    json: { name: 'Ada', message: `Hello, please call me back about order ${ipSeq}`, ...extra },
    headers: { 'x-forwarded-for': `198.51.100.${ipSeq}`, 'user-agent': UA },
  });
}
const spamOf = async (submissionId: string) => {
  const s = await t.api('GET', `/v1/submissions/${submissionId}`, key);
  expect(s.status).toBe(200);
  return s.json as { status: string; data: Record<string, unknown>; spam: { score: number; reasons: string[] } };
};
const RENDER_REASONS = ['too_fast', 'stale_page', 'bad_render_token'];
const renderToken = async (formId: string) => {
  const r = await t.request('GET', `/s/${formId}/render`, { headers: { origin: 'https://owner.example' } });
  expect(r.status).toBe(200);
  return r;
};

describe('the signed render token', () => {
  it('GET /s/{formId}/render answers a token for that form: CORS-open, never cached, verifiable', async () => {
    const formId = await form();
    const r = await renderToken(formId);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.json.token).toMatch(/^[A-Za-z0-9_-]{22}\.\d{13}$/);
    const k = await renderTokenKey(t.deps.database);
    const age = renderAgeS(k, formId, r.json.token, Date.now());
    expect(typeof age === 'number' && age >= 0 && age < 5).toBe(true);
    // Bound to its form: another form's id does not verify it.
    expect(renderAgeS(k, await form(), r.json.token, Date.now())).toBe('bad');
    const pre = await t.request('OPTIONS', `/s/${formId}/render`, { headers: { origin: 'https://owner.example' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const missing = await t.request('GET', '/s/fm_doesnotexist/render');
    expect(missing.status).toBe(404);
    expect(missing.json.error.hint).toBeTruthy();
  });

  it('the hosted page carries a token that verifies for its form', async () => {
    const formId = await form();
    const page = await t.request('GET', `/f/${formId}`);
    expect(page.status).toBe(200);
    const token = /<input type="hidden" name="_rendered" value="([^"]+)"/.exec(page.text)?.[1];
    expect(token).toBeDefined();
    const age = renderAgeS(await renderTokenKey(t.deps.database), formId, String(token), Date.now());
    expect(typeof age === 'number' && age < 5).toBe(true);
  });

  it('a post 0.5 s after render scores too_fast; one after min_seconds scores nothing for it', async () => {
    const formId = await form();
    const fast = (await renderToken(formId)).json.token;
    await sleep(500);
    const s = await spamOf((await post(formId, { _rendered: fast })).json.submission_id);
    expect(s.spam.reasons).toContain('too_fast');
    expect(s.spam.score).toBeGreaterThanOrEqual(0.6);
    expect(s.status).toBe('received'); // 0.6 alone stays under the default threshold 0.8
    expect(s.data).not.toHaveProperty('_rendered');

    const patched = await t.api('PATCH', `/v1/forms/${formId}`, key, {
      json: { settings: { spam: { min_seconds: 1 } } },
    });
    expect(patched.status).toBe(200);
    const slow = (await renderToken(formId)).json.token;
    await sleep(1100);
    const ok = await spamOf((await post(formId, { _rendered: slow })).json.submission_id);
    expect(ok.spam.reasons.filter((r) => RENDER_REASONS.includes(r))).toEqual([]);
  });

  it('a token older than a day scores stale_page', async () => {
    const formId = await form();
    const realNow = t.deps.now;
    t.deps.now = () => new Date(Date.now() - 25 * 3600 * 1000);
    let old: string;
    try {
      old = (await renderToken(formId)).json.token;
    } finally {
      t.deps.now = realNow;
    }
    const s = await spamOf((await post(formId, { _rendered: old })).json.submission_id);
    expect(s.spam.reasons).toContain('stale_page');
    expect(s.spam.reasons).not.toContain('too_fast');
  });

  it('a forged, altered or other form’s token scores bad_render_token; no token scores none of these', async () => {
    const formId = await form();
    const k = await renderTokenKey(t.deps.database);
    const past = Date.now() - 60_000;
    const otherForm = await form(otherKey);
    const cases = [
      'not-a-token',
      `${'A'.repeat(22)}.${past}`, // made up
      issueRenderToken(k, formId, past).replace(/\d$/, (d) => String((Number(d) + 1) % 10)), // time moved
      issueRenderToken(k, otherForm, past), // another organization's form
    ];
    for (const token of cases) {
      const s = await spamOf((await post(formId, { _rendered: token })).json.submission_id);
      expect(s.spam.reasons, token).toContain('bad_render_token');
      expect(s.spam.reasons).not.toContain('too_fast');
      expect(s.status).toBe('received'); // a modest weight: never spam by itself
      expect(s.data).not.toHaveProperty('_rendered');
    }
    const none = await spamOf((await post(formId)).json.submission_id);
    expect(none.spam.reasons.filter((r) => RENDER_REASONS.includes(r))).toEqual([]);
    const good = await spamOf(
      (await post(formId, { _rendered: issueRenderToken(k, formId, past) })).json.submission_id,
    );
    expect(good.spam.reasons.filter((r) => RENDER_REASONS.includes(r))).toEqual([]);
  });

  it('a form post from the hosted page sends its token: posted at once, it reads too_fast', async () => {
    const formId = await form();
    const page = await t.request('GET', `/f/${formId}`);
    const token = String(/name="_rendered" value="([^"]+)"/.exec(page.text)?.[1]);
    ipSeq += 1;
    const r = await t.request('POST', `/s/${formId}`, {
      body: new URLSearchParams({
        email: 'ada@example.com',
        message: 'Hello from the page',
        _hosted: '1',
        _rendered: token,
      }).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': `198.51.100.${ipSeq}`,
        'user-agent': UA,
      },
    });
    expect(r.status).toBe(303);
    const list = await t.api('GET', `/v1/submissions?form_id=${formId}`, key);
    const s = await spamOf(list.json.data[0].id);
    expect(s.spam.reasons).toContain('too_fast');
    expect(s.data).toEqual({ email: 'ada@example.com', message: 'Hello from the page' });
  });
});
