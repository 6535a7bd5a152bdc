import { describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, otherKey } = await tenantApp({ env: { TURNSTILE_VERIFY_URL: 'http://127.0.0.1:9/never' } });
let ipSeq = 0;
const freshIp = () => {
  ipSeq += 1;
  return `198.51.100.${ipSeq}`;
};

async function form(settings?: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const f = await t.api('POST', '/v1/forms', key, { json: { name: `F ${Math.random()}`, ...extra } });
  expect(f.status).toBe(201);
  if (settings) expect((await t.api('PATCH', `/v1/forms/${f.json.id}`, key, { json: { settings } })).status).toBe(200);
  return f.json as { id: string; submit_url: string };
}

const post = (formId: string, json: unknown, headers: Record<string, string> = {}) =>
  t.request('POST', `/s/${formId}`, { json, headers: { 'x-forwarded-for': freshIp(), ...headers } });

const detail = async (id: string) => (await t.api('GET', `/v1/submissions/${id}`, key)).json;

describe('POST /s/{formId}', () => {
  it('stores a JSON submission as sent, nested data kept, control fields removed', async () => {
    const f = await form();
    const data = { name: 'Ada', address: { city: 'Paris', lines: ['1', '2'] }, n: 3, ok: true };
    const r = await post(f.id, { ...data, _subject: 'Hi', _custom: 'x', _gotcha: '' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, status: 'received' });
    expect(r.json.submission_id).toMatch(/^sb_/);
    const s = await detail(r.json.submission_id);
    expect(s.data).toEqual(data);
    expect(s).toMatchObject({ form_id: f.id, status: 'received', test: false, quarantine_reason: null });
    expect(s.meta).toMatchObject({ content_type: 'application/json' });
    expect(s.spam.reasons).toContain('no_user_agent');
  });

  it('turns repeated urlencoded keys into arrays', async () => {
    const f = await form();
    const r = await t.request('POST', `/s/${f.id}`, {
      body: 'color=red&color=blue&name=Ada+L',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    expect(r.status).toBe(200);
    expect((await detail(r.json.submission_id)).data).toEqual({ color: ['red', 'blue'], name: 'Ada L' });
  });

  it('keeps a leading byte-order mark of a urlencoded body as the first key sent; JSON drops it', async () => {
    const f = await form();
    const r = await t.request('POST', `/s/${f.id}`, {
      body: '\uFEFFname=Ada',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    expect(r.status).toBe(200);
    expect((await detail(r.json.submission_id)).data).toEqual({ '\uFEFFname': 'Ada' });
    const j = await t.request('POST', `/s/${f.id}`, {
      body: '\uFEFF{"name":"Ada"}',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expect(j.status).toBe(200);
    expect((await detail(j.json.submission_id)).data).toEqual({ name: 'Ada' });
  });

  it('stores honeypot hits as spam with 200, default and renamed honeypot', async () => {
    const f = await form();
    const r = await post(f.id, { name: 'Bot', _gotcha: 'x' });
    expect(r.json.status).toBe('spam');
    const spam = (await detail(r.json.submission_id)).spam;
    expect(spam.score).toBe(1);
    expect(spam.reasons).toContain('honeypot_filled');
    const g = await form({ honeypot_field: 'website' });
    const r2 = await post(g.id, { name: 'Bot', website: 'http://spam' });
    expect(r2.json.status).toBe('spam');
    const r3 = await post(g.id, { name: 'Human', website: '' });
    expect(r3.json.status).toBe('received');
    expect((await detail(r3.json.submission_id)).data).toEqual({ name: 'Human' });
  });

  it('quarantines a foreign origin: 403 for a browser Origin, 200 for a server-side post; CORS echoes allowed origins', async () => {
    const f = await form({ allowed_origins: ['https://good.example'] });
    const ok = await post(f.id, { a: 1 }, { origin: 'https://good.example' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://good.example');
    const bad = await post(f.id, { a: 2 }, { origin: 'https://evil.example' });
    expect(bad.status).toBe(403);
    expect(bad.json.error.code).toBe('origin_rejected');
    expect(bad.headers.get('access-control-allow-origin')).toBeNull();
    const s = await detail(bad.json.error.details.submission_id);
    expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'origin_rejected' });
    const server = await post(f.id, { a: 3 });
    expect(server.status).toBe(200);
    expect(server.json).toMatchObject({ ok: false, status: 'quarantined' });
    const open = await form();
    const any = await post(open.id, { a: 1 }, { origin: 'https://whatever.example' });
    expect(any.headers.get('access-control-allow-origin')).toBe('https://whatever.example');
    const pre = await t.request('OPTIONS', `/s/${open.id}`, { headers: { origin: 'https://x.example' } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('rate-limits per client IP, stores the excess as quarantined and answers 429 with Retry-After', async () => {
    const f = await form({ rate_limit: { max: 2, window_s: 60 } });
    const ip = freshIp();
    for (let i = 0; i < 2; i += 1) expect((await post(f.id, { i }, { 'x-forwarded-for': ip })).status).toBe(200);
    const third = await post(f.id, { i: 3 }, { 'x-forwarded-for': ip });
    expect(third.status).toBe(429);
    expect(third.json.error.code).toBe('rate_limited');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const s = await detail(third.json.error.details.submission_id);
    expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'rate_limited' });
    expect((await post(f.id, { i: 4 }, { 'x-forwarded-for': `${freshIp()}, 10.0.0.1` })).status).toBe(200);
  });

  it('holds the rate limit under concurrent posts', async () => {
    const f = await form({ rate_limit: { max: 3, window_s: 60 } });
    const ip = freshIp();
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => post(f.id, { i }, { 'x-forwarded-for': ip })));
    expect(all.filter((r) => r.status === 200)).toHaveLength(3);
    expect(all.filter((r) => r.status === 429)).toHaveLength(5);
    const list = await t.api('GET', `/v1/forms/${f.id}/submissions?limit=200`, key);
    expect(list.json.data).toHaveLength(8);
  });

  it('checks the rate limit before the challenge: a post over the limit reads rate_limited whatever its token', async () => {
    const f = await form({ rate_limit: { max: 1, window_s: 60 }, challenge: { provider: 'turnstile', secret: 's' } });
    const ip = freshIp();
    // A failed challenge is stored (quarantined), so it counts towards the limit.
    const first = await post(f.id, { name: 'x' }, { 'x-forwarded-for': ip });
    expect((await detail(first.json.submission_id)).quarantine_reason).toBe('turnstile_failed');
    const second = await post(f.id, { name: 'y', 'cf-turnstile-response': 'tok' }, { 'x-forwarded-for': ip });
    expect(second.status).toBe(429);
    const s = await detail(second.json.error.details.submission_id);
    expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'rate_limited' });
  });

  it('quarantines a failed challenge without calling out when the token is missing', async () => {
    const f = await form({ challenge: { provider: 'turnstile', secret: 's' } });
    const r = await post(f.id, { name: 'x' });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('quarantined');
    expect((await detail(r.json.submission_id)).quarantine_reason).toBe('turnstile_failed');
    const unreachable = await post(f.id, { name: 'y', 'cf-turnstile-response': 'tok' });
    const s = await detail(unreachable.json.submission_id);
    expect(s.quarantine_reason).toBe('turnstile_failed');
    expect(s.data).toEqual({ name: 'y' });
  });

  it('stores paused-form posts with 202 and plans nothing', async () => {
    const f = await form();
    await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { status: 'paused' } });
    const r = await post(f.id, { a: 1 });
    expect(r.status).toBe(202);
    expect((await detail(r.json.submission_id)).deliveries).toEqual([]);
  });

  it('answers 404 with the envelope for an unknown form', async () => {
    const r = await post('fm_nope', { a: 1 });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
  });

  it('is idempotent per form by header or _idempotency, also under concurrent repeats', async () => {
    const f = await form();
    const a = await post(f.id, { n: 1, _idempotency: 'k1' });
    const b = await post(f.id, { n: 1, _idempotency: 'k1' });
    expect(b.json).toMatchObject({ submission_id: a.json.submission_id, idempotent: true });
    const g = await form();
    const c = await post(g.id, { n: 1 }, { 'idempotency-key': 'k1' });
    expect(c.json.submission_id).not.toBe(a.json.submission_id);
    expect(c.json.idempotent).toBeUndefined();
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => post(g.id, { n: 2 }, { 'idempotency-key': 'burst' })),
    );
    expect(new Set(burst.map((r) => r.json.submission_id)).size).toBe(1);
    const list = await t.api('GET', `/v1/forms/${g.id}/submissions`, key);
    expect(list.json.data).toHaveLength(2);
  });

  it('redirects HTML posts with 303 to _redirect, then redirect_url, then the thanks page', async () => {
    const html = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,*/*' };
    const f = await form({ redirect_url: 'https://example.com/default' });
    const r1 = await t.request('POST', `/s/${f.id}`, {
      body: `a=1&_redirect=${encodeURIComponent('https://example.com/x')}`,
      headers: html,
    });
    expect(r1.status).toBe(303);
    expect(r1.headers.get('location')).toBe('https://example.com/x');
    const r2 = await t.request('POST', `/s/${f.id}`, { body: 'a=1', headers: html });
    expect(r2.headers.get('location')).toBe('https://example.com/default');
    const g = await form(undefined, { name: '<b>Bold</b> form' });
    const r3 = await t.request('POST', `/s/${g.id}`, { body: 'a=1', headers: html });
    expect(r3.headers.get('location')).toBe(`http://127.0.0.1:8787/s/${g.id}/thanks`);
    const page = await t.request('GET', `/s/${g.id}/thanks`);
    expect(page.text).toContain('&lt;b&gt;Bold&lt;/b&gt; form');
    expect(page.text).not.toContain('<b>Bold</b>');
  });

  it('plans one delivery per route for _test submissions and returns their ids', async () => {
    const f = await form();
    const d = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'hook', config: { url: 'http://127.0.0.1:9/hook' } },
    });
    expect(d.status).toBe(201);
    const rt = await t.api('POST', '/v1/routes', key, { json: { form_id: f.id, destination_id: d.json.id } });
    expect(rt.status).toBe(201);
    const wakes = t.wakes;
    const r = await post(f.id, { name: 'T', _test: true });
    expect(r.json.deliveries).toHaveLength(1);
    expect(r.json.deliveries[0]).toMatch(/^dl_/);
    expect(t.wakes).toBe(wakes + 1);
    const s = await detail(r.json.submission_id);
    expect(s.test).toBe(true);
    expect(s.deliveries[0]).toMatchObject({ id: r.json.deliveries[0], status: 'pending', route_id: rt.json.id });
    const spam = await post(f.id, { name: 'B', _gotcha: 'x' });
    const sd = await detail(spam.json.submission_id);
    expect(sd.deliveries[0]).toMatchObject({ status: 'skipped', skip_reason: 'quality' });
    await t.api('PATCH', `/v1/routes/${rt.json.id}`, key, {
      json: { window: { from: '2000-01-01T00:00:00Z', until: '2000-01-02T00:00:00Z' } },
    });
    const late = await post(f.id, { name: 'W' });
    expect((await detail(late.json.submission_id)).deliveries[0]).toMatchObject({
      status: 'skipped',
      skip_reason: 'window',
    });
    await t.api('PATCH', `/v1/routes/${rt.json.id}`, key, { json: { enabled: false } });
    const off = await post(f.id, { name: 'Off' });
    expect((await detail(off.json.submission_id)).deliveries).toEqual([]);
  });

  it('records events, counts and usage; test submissions are not counted', async () => {
    const f = await form();
    const a = await post(f.id, { n: 1 });
    await post(f.id, { n: 2, _test: true });
    const got = (await t.api('GET', `/v1/forms/${f.id}`, key)).json;
    expect(got.counts.submissions).toBe(1);
    expect(typeof got.counts.last_submission_at).toBe('string');
    const ev = await t.deps.database.rows<{ type: string }>(
      (await import('drizzle-orm'))
        .sql`select type from events where subject->>'submission_id' = ${a.json.submission_id}`,
    );
    expect(ev.map((e) => e.type)).toEqual(['submission.received']);
  });

  it('quarantines over the monthly quota and releases nothing to routes', async () => {
    const q = await startTestApp({
      DEFAULT_PLAN: 'free',
      PLAN_LIMITS: JSON.stringify({ free: { submissions_per_month: 1 } }),
    });
    try {
      const k = (await q.onboard()).key;
      const f = (await q.api('POST', '/v1/forms', k, { json: { name: 'Q' } })).json;
      const first = await q.request('POST', `/s/${f.id}`, { json: { n: 1 } });
      expect(first.json.status).toBe('received');
      const test = await q.request('POST', `/s/${f.id}`, { json: { n: 2, _test: true } });
      expect(test.json.status).toBe('received');
      const second = await q.request('POST', `/s/${f.id}`, { json: { n: 3 } });
      expect(second.json.status).toBe('quarantined');
      const s = (await q.api('GET', `/v1/submissions/${second.json.submission_id}`, k)).json;
      expect(s.quarantine_reason).toBe('over_quota');
    } finally {
      await q.close();
    }
  });

  it('keeps another organization out of submissions', async () => {
    const f = await form();
    const r = await post(f.id, { secret: 'mine' });
    expect((await t.api('GET', `/v1/submissions/${r.json.submission_id}`, otherKey)).status).toBe(404);
  });
});
