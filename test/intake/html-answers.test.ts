import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { createForm } from '../helpers/seed.js';

let t: TestEnv;
let key: string;
let ipSeq = 0;

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
});
afterAll(() => t.close());

const BROWSER = {
  'content-type': 'application/x-www-form-urlencoded',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
};
const FIX_ME = {
  type: 'object',
  required: ['work_email', 'age'],
  properties: { work_email: { type: 'string', format: 'email' }, name: { type: 'string' }, age: { type: 'integer' } },
};

async function form(settings: Record<string, unknown> = {}, schema?: unknown, ui?: unknown) {
  const id = await createForm(t, key);
  const patch = { settings, ...(schema ? { schema_mode: 'enforce' } : {}) };
  expect((await t.api('PATCH', `/v1/forms/${id}`, key, { json: patch })).status).toBe(200);
  if (schema) {
    const p = await t.api('POST', `/v1/forms/${id}/schema`, key, { json: { json_schema: schema, ui } });
    expect(p.status).toBe(201);
  }
  return id;
}

const browserPost = (formId: string, body: string, headers: Record<string, string> = {}) => {
  ipSeq += 1;
  return t.request('POST', `/s/${formId}`, {
    body,
    headers: { ...BROWSER, 'x-forwarded-for': `203.0.113.${ipSeq}`, ...headers },
  });
};
const submissions = async (formId: string) =>
  (await t.api('GET', `/v1/forms/${formId}/submissions`, key)).json.data as {
    id: string;
    status: string;
    quarantine_reason: string | null;
    data: Record<string, unknown>;
  }[];

describe('answers to a browser’s form post', () => {
  it('a schema violation gets a 422 page naming each field to fix, never the thanks page', async () => {
    const id = await form({ redirect_url: 'https://example.com/thanks' }, FIX_ME, {
      work_email: { label: 'Work <email>' },
    });
    const r = await browserPost(id, 'name=Ada&age=old');
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('location')).toBeNull();
    expect(r.text).toContain('<li><strong>Work &lt;email&gt;</strong> (work_email): is required</li>');
    expect(r.text).toContain('<li><strong>Age</strong>: must be a whole number</li>');
    expect(r.text).toContain('href="javascript:history.back()"');
    expect(r.text).not.toContain('was received');
    const [s] = await submissions(id);
    expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'schema_violation', data: { name: 'Ada' } });
    // A script posting the same form with Accept: application/json still gets JSON.
    const j = await t.request('POST', `/s/${id}`, {
      body: 'name=Ada',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    expect(j.status).toBe(200);
    expect(j.json).toMatchObject({ ok: false, status: 'quarantined' });
  });

  it('spam keeps the ordinary 303, even when its data violates the schema', async () => {
    const id = await form({ redirect_url: 'https://example.com/thanks' }, FIX_ME);
    const r = await browserPost(id, 'name=bot&_gotcha=http%3A%2F%2Fspam.example');
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('https://example.com/thanks');
    expect((await submissions(id))[0].status).toBe('spam');
  });

  it('a post from an origin outside allowed_origins gets a readable 403 page, stored quarantined', async () => {
    const id = await form({ allowed_origins: ['https://good.example'] });
    const r = await browserPost(id, 'name=Ada', { origin: 'https://evil.example', referer: 'https://evil.example/x' });
    expect(r.status).toBe(403);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.text).toContain('<code>https://evil.example</code>');
    const [s] = await submissions(id);
    expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'origin_rejected' });
  });

  it('over the rate limit gets a readable 429 page with Retry-After', async () => {
    const id = await form({ rate_limit: { max: 1, window_s: 60 } });
    const ip = { 'x-forwarded-for': '198.51.100.77' };
    expect((await browserPost(id, 'n=1', ip)).status).toBe(303);
    const r = await browserPost(id, 'n=2', ip);
    expect(r.status).toBe(429);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.text).toContain('Too many submissions');
  });

  it('a _redirect with CR/LF or another control character falls back to the ordinary thanks page', async () => {
    const id = await form();
    for (const bad of ['https://example.org/a%0D%0AX:%201', 'https://example.org/a%0Ab', 'https://example.org/%09']) {
      const r = await browserPost(id, `name=crlf&_redirect=${bad}`);
      expect(r.status).toBe(303);
      expect(r.headers.get('location')).toBe(`http://127.0.0.1:8787/s/${id}/thanks`);
    }
    const stored = await submissions(id);
    expect(stored).toHaveLength(3);
    expect(stored.every((s) => s.status === 'received' && s.data.name === 'crlf')).toBe(true);
    // With a redirect_url, that is the ordinary target; a non-http(s) _redirect falls back the same way.
    const g = await form({ redirect_url: 'https://example.com/done' });
    for (const bad of ['https://example.org/a%0D%0Ab', 'javascript%3Aalert(1)']) {
      const r = await browserPost(g, `_redirect=${bad}`);
      expect(r.headers.get('location')).toBe('https://example.com/done');
    }
    // Non-ASCII is percent-encoded: every Location is a valid header.
    const u = await browserPost(id, `_redirect=${encodeURIComponent('https://example.org/grüße?q=ü')}`, {
      origin: 'https://example.org',
    });
    expect(u.status).toBe(303);
    expect(u.headers.get('location')).toBe('https://example.org/gr%C3%BC%C3%9Fe?q=%C3%BC');
  });

  it('a form open to every site follows _redirect only to the host the post came from (or its redirect_url’s)', async () => {
    const id = await form();
    const thanks = `http://127.0.0.1:8787/s/${id}/thanks`;
    const to = (target: string, headers: Record<string, string> = {}) =>
      browserPost(id, `name=r&_redirect=${encodeURIComponent(target)}`, headers).then((r) => {
        expect(r.status).toBe(303);
        return r.headers.get('location');
      });
    // No Origin and no Referer: nobody vouches for the target.
    expect(await to('https://evil.example/phish')).toBe(thanks);
    // Another host than the posting site's, whatever the scheme or a look-alike suffix.
    expect(await to('https://evil.example/phish', { origin: 'https://shop.example' })).toBe(thanks);
    expect(await to('https://shop.example.evil.example/x', { origin: 'https://shop.example' })).toBe(thanks);
    expect(await to('https://shop.example:8443/x', { origin: 'https://shop.example' })).toBe(thanks);
    expect(await to('https://evil.example/', { referer: 'https://shop.example/contact' })).toBe(thanks);
    // The posting site's own host, by Origin or by Referer (Origin "null" falls back to Referer).
    expect(await to('https://shop.example/thanks', { origin: 'https://shop.example' })).toBe(
      'https://shop.example/thanks',
    );
    expect(await to('http://shop.example/ok', { origin: 'null', referer: 'https://shop.example/contact' })).toBe(
      'http://shop.example/ok',
    );
    // "*" is open to every site too: the same rule.
    const any = await form({ allowed_origins: ['*'] });
    const r = await browserPost(any, `_redirect=${encodeURIComponent('https://evil.example/')}`, {
      origin: 'https://shop.example',
    });
    expect(r.headers.get('location')).toBe(`http://127.0.0.1:8787/s/${any}/thanks`);
    // The host of the form's own redirect_url is the owner's: followed; another falls back to redirect_url.
    const own = await form({ redirect_url: 'https://owner.example/done' });
    const ok = await browserPost(own, `_redirect=${encodeURIComponent('https://owner.example/other')}`);
    expect(ok.headers.get('location')).toBe('https://owner.example/other');
    const no = await browserPost(own, `_redirect=${encodeURIComponent('https://evil.example/')}`);
    expect(no.headers.get('location')).toBe('https://owner.example/done');
    // A form that lists origins follows a listed one only, as before.
    const listed = await form({ allowed_origins: ['https://good.example'] });
    const l1 = await browserPost(listed, `_redirect=${encodeURIComponent('https://good.example/t')}`, {
      origin: 'https://good.example',
    });
    expect(l1.headers.get('location')).toBe('https://good.example/t');
    const l2 = await browserPost(listed, `_redirect=${encodeURIComponent('https://evil.example/t')}`, {
      origin: 'https://good.example',
    });
    expect(l2.headers.get('location')).toBe(`http://127.0.0.1:8787/s/${listed}/thanks`);
  });

  it('the preflight from any origin lets the browser send its POST; an unknown form is 404', async () => {
    const id = await form({ allowed_origins: ['https://good.example'] });
    const r = await t.request('OPTIONS', `/s/${id}`, {
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    expect(r.headers.get('access-control-allow-methods')).toContain('POST');
    expect(r.headers.get('access-control-allow-headers')).toMatch(/content-type/i);
    expect(r.headers.get('vary')).toMatch(/origin/i);
    // The POST that follows is stored and refused without the header: the page reads nothing.
    const post = await t.request('POST', `/s/${id}`, {
      json: { name: 'x' },
      headers: { origin: 'https://evil.example' },
    });
    expect(post.status).toBe(403);
    expect(post.json.error.code).toBe('origin_rejected');
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
    expect((await t.request('OPTIONS', '/s/fm_01h0000000000000000000000a')).status).toBe(404);
  });
});
