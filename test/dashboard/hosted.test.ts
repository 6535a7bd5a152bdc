import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forms } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { createForm } from '../helpers/seed.js';

let t: TestEnv;
let key: string;
let ipSeq = 0;
const BASE = 'http://127.0.0.1:8787';

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
});
afterAll(() => t.close());

const SCHEMA = {
  type: 'object',
  required: ['email', 'topic', 'age'],
  properties: {
    email: { type: 'string', format: 'email' },
    topic: { type: 'string', enum: ['sales', 'support'] },
    age: { type: 'integer', minimum: 18 },
    message: { type: 'string', maxLength: 2000 },
    subscribe: { type: 'boolean' },
  },
};
const UI = {
  message: { order: 1, label: 'Your message', placeholder: 'Say hello', help: 'Plain text only' },
  email: { order: 2, label: 'Work email' },
  topic: { order: 3, widget: 'radio' },
  age: { order: 4 },
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

const page = (id: string) => t.request('GET', `/f/${id}`);

/** A browser's post from the hosted page: urlencoded, HTML wanted, from the service's own origin. */
function postFromPage(id: string, fields: Record<string, string>) {
  ipSeq += 1;
  return t.request('POST', `/s/${id}`, {
    body: new URLSearchParams(fields).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
      origin: BASE,
      referer: `${BASE}/f/${id}`,
      'x-forwarded-for': `198.51.100.${ipSeq}`,
    },
  });
}

describe('GET /f/{formId}', () => {
  it('renders the schema’s fields in ui order with labels, placeholder, help and widgets, posting to the intake', async () => {
    const id = await form({}, SCHEMA, UI);
    const r = await page(id);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const html = r.text;
    expect(html.startsWith('<!DOCTYPE html><html lang="en">')).toBe(true);
    expect(html).toContain(`<form action="/s/${id}" method="post">`);
    // ui.order first (message, email, topic, age), then the rest by name (subscribe).
    const order = ['f-message', 'f-email', 'f-topic', 'f-age', 'f-subscribe'].map((x) => html.indexOf(`id="${x}`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).toContain('<label for="f-message">Your message</label>');
    expect(html).toContain('placeholder="Say hello"');
    expect(html).toContain('<small id="f-message-help">Plain text only</small>');
    expect(html).toMatch(/<textarea id="f-message" name="message"[^>]*maxlength="2000"/);
    expect(html).toContain('<input id="f-email" name="email" type="email" required>');
    expect(html).toContain('<legend>Topic</legend>');
    expect(html).toContain('type="radio" id="f-topic-1" name="topic" value="sales" required');
    expect(html).toMatch(/<input id="f-age" name="age" type="number" min="18"/);
    expect(html).toContain('<input id="f-subscribe" name="subscribe" type="checkbox" value="true">');
    // The honeypot (hidden, out of the tab order) and the marker that brings a 422 back here.
    expect(html).toContain('<input type="text" name="_gotcha" tabindex="-1" autocomplete="off" hidden=""/>');
    expect(html).toContain('<input type="hidden" name="_hosted" value="1"/>');
    expect(html).not.toContain('cf-turnstile');
    expect(html).not.toMatch(/<script/);
  });

  it('uses the form’s own honeypot name and the default fields before a schema exists', async () => {
    const id = await form({ honeypot_field: '_trap' });
    const html = (await page(id)).text;
    expect(html).toContain('name="_trap"');
    expect(html).not.toContain('name="_gotcha"');
    for (const n of ['name', 'email', 'message']) expect(html).toContain(`name="${n}"`);
  });

  it('is noindex, with its own CSP: no inline script, form-action self, framed by nobody when no origin is listed', async () => {
    const id = await form({}, SCHEMA, UI);
    const r = await page(id);
    expect(r.text).toContain('<meta name="robots" content="noindex"/>');
    expect(r.headers.get('x-robots-tag')).toBe('noindex');
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain(`form-action 'self' ${BASE}`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    // The inline style is exactly what the hash allows.
    const css = /<style>([\s\S]*?)<\/style>/.exec(r.text)?.[1] ?? '';
    const { createHash } = await import('node:crypto');
    expect(csp).toContain(`'sha256-${createHash('sha256').update(css).digest('base64')}'`);
  });

  it('may be framed only by the form’s allowed_origins; "*" lets any site frame it', async () => {
    const id = await form({ allowed_origins: ['https://www.example.com', 'https://shop.example.org/'] });
    const r = await page(id);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain('frame-ancestors https://www.example.com https://shop.example.org;');
    expect(r.headers.get('x-frame-options')).toBeNull();
    const any = await form({ allowed_origins: ['*'] });
    expect((await page(any)).headers.get('content-security-policy')).toContain('frame-ancestors *;');
    // An entry the API now refuses, stored by an older release: it frames nothing.
    const junk = await form();
    await t.deps.database.db
      .update(forms)
      .set({ settings: { allowed_origins: ['nothing valid'] } })
      .where(eq(forms.id, junk));
    expect((await page(junk)).headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('shows the Turnstile widget with the form’s site key and allows only Turnstile’s origin besides self', async () => {
    const id = await form({ challenge: { provider: 'turnstile', site_key: '0x4AAAAAAA_site-key' } });
    const r = await page(id);
    expect(r.status).toBe(200);
    expect(r.text).toContain('<div class="cf-turnstile" data-sitekey="0x4AAAAAAA_site-key"></div>');
    expect(r.text).toContain('<script src="https://challenges.cloudflare.com/turnstile/v0/api.js" async="" defer="">');
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self' https://challenges.cloudflare.com;");
    expect(csp).toContain('frame-src https://challenges.cloudflare.com');
    // Without a site key the page could never be accepted: it says so instead of a form.
    const nokey = await form({ challenge: { provider: 'turnstile' } });
    const n = await page(nokey);
    expect(n.status).toBe(409);
    expect(n.text).toContain('settings.challenge.site_key');
    expect(n.text).not.toContain('<form');
  });

  it('escapes hostile labels, help and options', async () => {
    const id = await form(
      {},
      { type: 'object', properties: { a: { type: 'string', enum: ['<b>x</b>'] }, b: { type: 'string' } } },
      { a: { label: '<script>alert(1)</script>' }, b: { help: '"><img src=x onerror=alert(1)>' } },
    );
    const html = (await page(id)).text;
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>x</b>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
  });

  it('refuses a form with a password or card-number field, by name, format, widget or label, and renders no field', async () => {
    const cases: [unknown, unknown, string][] = [
      [
        { type: 'object', properties: { email: { type: 'string' }, new_password: { type: 'string' } } },
        {},
        'new_password',
      ],
      [{ type: 'object', properties: { card: { type: 'string', format: 'credit-card' } } }, {}, 'its format'],
      [
        { type: 'object', properties: { secret_thing: { type: 'string' } } },
        { secret_thing: { widget: 'password' } },
        'ui widget',
      ],
      [
        { type: 'object', properties: { q1: { type: 'string' } } },
        { q1: { label: 'Credit card number' } },
        'its label',
      ],
      [
        { type: 'object', properties: { billing: { type: 'object', properties: { cvc: { type: 'string' } } } } },
        {},
        'billing.cvc',
      ],
    ];
    for (const [schema, ui, why] of cases) {
      const id = await form({}, schema, ui);
      const r = await page(id);
      expect(r.status, why).toBe(409);
      expect(r.text, why).toContain('looks like a password or a payment card number');
      expect(r.text, why).toContain(why);
      expect(r.text, why).not.toContain('<form');
      expect(r.text, why).not.toContain('<input');
      expect(r.headers.get('x-robots-tag')).toBe('noindex');
    }
    // Look-alikes that are neither stay allowed.
    const ok = await form(
      {},
      { type: 'object', properties: { spinner: { type: 'string' }, company: { type: 'string' } } },
    );
    expect((await page(ok)).status).toBe(200);
  });

  it('answers an unknown form with a 404 page and a paused one with a 410 page, not JSON', async () => {
    const r = await page('fm_doesnotexist');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toContain('Form not found');
    expect(r.headers.get('x-robots-tag')).toBe('noindex');
    const id = await form();
    expect((await t.api('PATCH', `/v1/forms/${id}`, key, { json: { status: 'paused' } })).status).toBe(200);
    const p = await page(id);
    expect(p.status).toBe(410);
    expect(p.text).toContain('not taking submissions right now');
    expect(p.text).not.toContain('<form');
  });
});

describe('a post from the hosted page', () => {
  it('comes back to the hosted page after a schema_violation: values kept, each error next to its field', async () => {
    const id = await form({ allowed_origins: ['https://www.example.com'] }, SCHEMA, UI);
    const r = await postFromPage(id, {
      message: 'Hi <there> & "you"',
      email: 'not-an-email',
      topic: 'support',
      age: '12',
      subscribe: 'true',
      _gotcha: '',
      _hosted: '1',
    });
    expect(r.status).toBe(422);
    expect(r.headers.get('x-robots-tag')).toBe('noindex');
    expect(r.headers.get('content-security-policy')).toContain('frame-ancestors https://www.example.com');
    const html = r.text;
    expect(html).toContain('Please check your answers');
    expect(html).toContain(`<form action="/s/${id}" method="post">`);
    // Each error right after its control, tied to it by aria-describedby, the control marked invalid.
    expect(html).toMatch(
      /<input id="f-email" name="email" type="email" required aria-describedby="f-email-error" aria-invalid="true" value="not-an-email">\s*<small id="f-email-error" class="field-error">Work email must be an email address<\/small>/,
    );
    expect(html).toMatch(
      /<input id="f-age" name="age" type="number" min="18" required aria-describedby="f-age-error" aria-invalid="true" value="12">\s*<small id="f-age-error" class="field-error">Age must be &gt;= 18<\/small>/,
    );
    // Values kept, escaped: the textarea, the radio choice and the checkbox.
    expect(html).toContain('>Hi &lt;there&gt; &amp; &quot;you&quot;</textarea>');
    expect(html).toContain('value="support" required checked');
    expect(html).toMatch(/id="f-subscribe"[^>]*checked/);
    expect(html).not.toMatch(/id="f-message"[^>]*aria-invalid/);
    // The summary links to each field.
    expect(html).toContain('<a href="#f-email">Work email must be an email address</a>');
    // Stored as quarantined, the marker not in its data; the post from the service's own origin is no origin_rejected.
    const list = await t.api('GET', `/v1/forms/${id}/submissions`, key);
    expect(list.json.data[0]).toMatchObject({ status: 'quarantined', quarantine_reason: 'schema_violation' });
    expect(list.json.data[0].data).not.toHaveProperty('_hosted');

    // Fixed, it is received and sent to the thanks page.
    const ok = await postFromPage(id, {
      message: 'Hi',
      email: 'ada@example.com',
      topic: 'sales',
      age: '30',
      _hosted: '1',
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(`${BASE}/s/${id}/thanks`);
    const again = await t.api('GET', `/v1/forms/${id}/submissions`, key);
    expect(again.json.data[0]).toMatchObject({ status: 'received', data: { email: 'ada@example.com', age: 30 } });
  });

  it('puts an issue with no field on the page in the summary, and leaves other posts’ 422 page as it was', async () => {
    const schema = {
      type: 'object',
      required: ['email'],
      additionalProperties: false,
      properties: { email: { type: 'string', format: 'email' } },
    };
    const id = await form({}, schema);
    const r = await postFromPage(id, { email: 'ada@example.com', extra: 'x', _hosted: '1' });
    expect(r.status).toBe(422);
    expect(r.text).toContain('<li>Extra must NOT have additional properties</li>');
    expect(r.text).toContain('value="ada@example.com"');
    // Without the marker: the intake's own list page, unchanged.
    const plain = await postFromPage(id, { email: 'nope' });
    expect(plain.status).toBe(422);
    expect(plain.text).toContain('href="javascript:history.back()"');
    expect(plain.text).not.toContain('<form');
    expect(plain.headers.get('content-security-policy')).toBeNull();
  });

  it('another website’s post is still quarantined origin_rejected for a form that lists origins', async () => {
    const id = await form({ allowed_origins: ['https://www.example.com'] });
    const r = await t.request('POST', `/s/${id}`, {
      body: 'email=a%40example.com&message=hi',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'text/html',
        origin: 'https://evil.example',
        'x-forwarded-for': '198.51.100.250',
      },
    });
    expect(r.status).toBe(403);
  });
});

describe('the form answer links to the hosted page', () => {
  it('has hosted_url on create, get and list', async () => {
    const c = await t.api('POST', '/v1/forms', key, { json: { name: 'Hosted link' } });
    expect(c.status).toBe(201);
    expect(c.json.hosted_url).toBe(`${BASE}/f/${c.json.id}`);
    const g = await t.api('GET', `/v1/forms/${c.json.id}`, key);
    expect(g.json.hosted_url).toBe(`${BASE}/f/${c.json.id}`);
    const l = await t.api('GET', '/v1/forms', key);
    expect(l.json.data.find((f: { id: string }) => f.id === c.json.id).hosted_url).toBe(c.json.hosted_url);
    expect((await page(c.json.id)).status).toBe(200);
  });
});
