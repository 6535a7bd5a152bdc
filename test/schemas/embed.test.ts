import { describe, expect, it } from 'vitest';
import { DEFAULT_FIELDS } from '../../server/present/embed.js';
import { createForm } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp();

const publish = async (formId: string, json_schema: unknown, ui?: unknown) =>
  expect((await t.api('POST', `/v1/forms/${formId}/schema`, key, { json: { json_schema, ui } })).status).toBe(201);
const embed = async (formId: string, k = key) => {
  const r = await t.api('GET', `/v1/forms/${formId}/embed`, k);
  expect(r.status).toBe(200);
  return r.json as { html: string; fetch: string; react: string; astro: string; nextjs_action: string };
};
const submitUrlOf = async (formId: string) => (await t.api('GET', `/v1/forms/${formId}`, key)).json.submit_url;

/** The ids of the html labels, in document order. */
const labelIds = (html: string) => [...html.matchAll(/<label for="([^"]+)">/g)].map((m) => m[1]);
/** The opening tag of the control with that id (escaped attribute values never hold a raw ">"). */
const control = (html: string, id: string) => {
  const m = new RegExp(`<(?:input|select|textarea) id="${id}"[^>]*>`).exec(html);
  if (!m) throw new Error(`no control ${id} in\n${html}`);
  return m[0];
};
/** The JSON body of the fetch example. */
const fetchBody = (snippet: string) =>
  JSON.parse(/body: JSON\.stringify\(\{ \.\.\.(.*), _rendered: await rendered \}\),\n/.exec(snippet)?.[1] ?? 'null');

const nasty = 'Nick "the" <script>alert(\'x\')</script> {y} & co';
const nastyEsc = 'Nick &quot;the&quot; &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &#123;y&#125; &amp; co';
const proLabel = 'Pro "plus" <b>{n}</b>';

const schema = {
  type: 'object',
  required: ['email', 'message', 'plan', 'age'],
  properties: {
    email: { type: 'string', format: 'email' },
    plan: { type: 'string', enum: ['free', 'pro', 'team'] },
    age: { type: 'integer', minimum: 18, maximum: 99 },
    score: { type: 'number', minimum: 0, maximum: 10 },
    subscribe: { type: 'boolean' },
    message: { type: 'string', maxLength: 1000 },
    _internal: { type: 'string' },
    // Unordered: they follow the ordered ones in schema order. (Stored as jsonb, the properties come
    // back shorter keys first, so these two are declared in that order already.)
    nick: { type: 'string', minLength: 2, maxLength: 20, pattern: '^[a-z]+$' },
    website: { type: 'string', format: 'uri' },
  },
};
const ui = {
  message: {
    label: 'Your message',
    placeholder: 'Tell us…',
    order: 1,
    widget: 'textarea',
    help: 'Markdown is fine <em>really</em>',
  },
  email: { label: 'Work email', placeholder: 'you@example.com', order: 2 },
  plan: {
    label: 'Plan',
    order: 3,
    widget: 'select',
    options: [{ value: 'free', label: 'Free tier' }, { value: 'pro', label: proLabel }, 'team'],
  },
  age: { order: 4 },
  subscribe: { label: 'Send me news', order: 5, help: 'At most monthly' },
  score: { order: 6 },
  _internal: { label: 'Internal', order: 0 },
  website: { placeholder: 'https://"your".site' },
  nick: { label: nasty },
};

describe('GET /v1/forms/{id}/embed', () => {
  it('without a schema renders the default fields: name (optional), email and message (required)', async () => {
    expect(DEFAULT_FIELDS.map((f) => [f.name, f.type, f.required])).toEqual([
      ['name', 'text', false],
      ['email', 'email', true],
      ['message', 'textarea', true],
    ]);
    const formId = await createForm(t, key);
    const e = await embed(formId, readKey);
    const url = await submitUrlOf(formId);
    expect(e.html).toContain(`<form action="${url}" method="POST">`);
    expect(labelIds(e.html)).toEqual(['f-name', 'f-email', 'f-message']);
    expect(e.html).toContain('<label for="f-name">Name</label>');
    expect(control(e.html, 'f-name')).toBe('<input id="f-name" name="name" type="text">');
    expect(control(e.html, 'f-email')).toBe('<input id="f-email" name="email" type="email" required>');
    expect(control(e.html, 'f-message')).toBe('<textarea id="f-message" name="message" required>');
    expect(e.html).toContain('name="_gotcha" tabindex="-1"');
    expect(fetchBody(e.fetch)).toEqual({ name: 'example name', email: 'ada@example.com', message: 'example message' });
    expect(e.react).toContain('<label htmlFor="f-email">Email</label>');

    // A schema that declares no (visible) field keeps the defaults.
    await publish(formId, { type: 'object', properties: { _hidden: { type: 'string' } } });
    expect(labelIds((await embed(formId)).html)).toEqual(['f-name', 'f-email', 'f-message']);
  });

  it('renders the current schema with its ui hints: order, labels, placeholders, help, constraints', async () => {
    const formId = await createForm(t, key);
    await publish(formId, schema, ui);
    const e = await embed(formId, readKey);
    const { html } = e;

    // One label per property in ui order (unordered ones after, in schema order); no control field.
    expect(labelIds(html)).toEqual([
      'f-message',
      'f-email',
      'f-plan',
      'f-age',
      'f-subscribe',
      'f-score',
      'f-nick',
      'f-website',
    ]);
    expect(html).not.toContain('_internal');
    expect(html).not.toContain('Internal');

    expect(html).toContain('<label for="f-message">Your message</label>');
    expect(control(html, 'f-message')).toBe(
      '<textarea id="f-message" name="message" placeholder="Tell us…" maxlength="1000" required aria-describedby="f-message-help">',
    );
    expect(html).toContain('<small id="f-message-help">Markdown is fine &lt;em&gt;really&lt;/em&gt;</small>');

    expect(html).toContain('<label for="f-email">Work email</label>');
    expect(control(html, 'f-email')).toBe(
      '<input id="f-email" name="email" type="email" placeholder="you@example.com" required>',
    );

    expect(control(html, 'f-plan')).toBe('<select id="f-plan" name="plan" required>');
    expect(html).toContain(
      '<option value="">Choose…</option><option value="free">Free tier</option>' +
        '<option value="pro">Pro &quot;plus&quot; &lt;b&gt;&#123;n&#125;&lt;/b&gt;</option>' +
        '<option value="team">team</option></select>',
    );

    expect(html).toContain('<label for="f-age">Age</label>');
    expect(control(html, 'f-age')).toBe('<input id="f-age" name="age" type="number" min="18" max="99" required>');
    expect(control(html, 'f-score')).toBe(
      '<input id="f-score" name="score" type="number" min="0" max="10" step="any">',
    );
    expect(control(html, 'f-subscribe')).toBe(
      '<input id="f-subscribe" name="subscribe" type="checkbox" value="true" aria-describedby="f-subscribe-help">',
    );
    expect(html).toContain('<small id="f-subscribe-help">At most monthly</small>');
    expect(control(html, 'f-website')).toBe(
      '<input id="f-website" name="website" type="url" placeholder="https://&quot;your&quot;.site">',
    );
    expect(control(html, 'f-nick')).toBe(
      '<input id="f-nick" name="nick" type="text" minlength="2" maxlength="20" pattern="^[a-z]+$">',
    );

    // Exactly the required properties carry `required`; help is wired only where there is help.
    const requiredIds = labelIds(html).filter((id) => / required[ >]/.test(control(html, id)));
    expect(requiredIds).toEqual(['f-message', 'f-email', 'f-plan', 'f-age']);
    expect([...html.matchAll(/aria-describedby="([^"]+)"/g)].map((m) => m[1])).toEqual([
      'f-message-help',
      'f-subscribe-help',
    ]);
    expect(html).toContain('<input type="text" name="_gotcha" tabindex="-1"');

    expect(fetchBody(e.fetch)).toEqual({
      message: 'example message',
      email: 'ada@example.com',
      plan: 'free',
      age: 18,
      subscribe: true,
      score: 0,
      website: 'https://example.com',
      nick: 'example nick',
    });
  });

  it('escapes labels, options and placeholders: no live markup in html and astro, JS strings in react', async () => {
    const formId = await createForm(t, key);
    await publish(formId, schema, ui);
    const e = await embed(formId);

    expect(e.html).toContain(`<label for="f-nick">${nastyEsc}</label>`);
    // The one script is the render-token line, which names the form's render URL and nothing else.
    const scripts = [...e.html.matchAll(/<script[^>]*>(.*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([
      `(i=>fetch(${JSON.stringify(`${await submitUrlOf(formId)}/render`)}).then(r=>r.json()).then(j=>i.value=j.token))(document.currentScript.previousElementSibling)`,
    ]);
    expect(e.html.match(/<script/g)).toHaveLength(1);
    expect(e.html).not.toContain('<b>');
    expect(e.html).not.toContain('<em>');
    expect(e.html).not.toMatch(/[{}]/);
    // Astro reads {…} in markup as an expression: the only one is the action.
    expect(e.astro.match(/\{[^}]*\}/g)).toEqual(['{action}']);
    expect(e.astro).toContain(`const action = ${JSON.stringify(await submitUrlOf(formId))};`);
    expect(e.astro).toContain(`<label for="f-nick">${nastyEsc}</label>`);

    // JSX has no escapes in text or attribute strings: anything with markup goes in as a JS string.
    const { react } = e;
    expect(react).toContain('export function ContactForm()');
    expect(react).toContain(`<label htmlFor="f-nick">{${JSON.stringify(nasty)}}</label>`);
    expect(react).toContain(`<option value="pro">{${JSON.stringify(proLabel)}}</option>`);
    expect(react).toContain('<option value="">Choose…</option>');
    expect(react).toContain(`placeholder={${JSON.stringify('https://"your".site')}}`);
    expect(react).toContain(
      `<small id="f-message-help">{${JSON.stringify('Markdown is fine <em>really</em>')}}</small>`,
    );
    expect(react).toContain(
      '<textarea id="f-message" name="message" placeholder="Tell us…" maxLength={1000} required aria-describedby="f-message-help" />',
    );
    expect(react).toContain('<input id="f-age" name="age" type="number" min={18} max={99} required />');
    expect(react).toContain('<input id="f-subscribe" name="subscribe" type="checkbox" value="true"');
    expect(react).toContain('<small id="f-subscribe-help">At most monthly</small>');
    const reactLabels = [...react.matchAll(/<label htmlFor="([^"]+)">/g)].map((m) => m[1]);
    expect(reactLabels).toEqual(labelIds(e.html));
    expect(react).not.toContain('_internal');
    expect(react).toContain('name="_gotcha" tabIndex={-1}');
    for (const snippet of Object.values(e)) expect(snippet).toContain(await submitUrlOf(formId));
  });

  it('derives controls from the schema when hints say less: enum, anyOf format, aliases, option values', async () => {
    const formId = await createForm(t, key);
    await publish(
      formId,
      {
        type: 'object',
        required: ['size'],
        properties: {
          // An inferred draft's optional email.
          contact: { type: ['string', 'null'], anyOf: [{ format: 'email' }, { const: '' }] },
          size: { type: ['string', 'null'], enum: ['s', 'm', '', null] },
          color: { type: 'string' },
          shade: { type: 'string' },
          when: { type: 'string', format: 'date-time' },
          day: { type: 'string', format: 'date' },
          count: { type: 'integer' },
          'a b': { type: 'string' },
          'a-b': { type: 'string' },
        },
      },
      {
        color: { widget: 'radio', options: [1, true, { value: 'a"b', label: 'Quote' }] },
        shade: { widget: 'select' },
      },
    );
    const { html, react } = await embed(formId);
    expect(control(html, 'f-contact')).toBe('<input id="f-contact" name="contact" type="email">');
    expect(control(html, 'f-size')).toBe('<select id="f-size" name="size" required>');
    expect(html).toContain(
      '<option value="">Choose…</option><option value="s">s</option><option value="m">m</option></select>',
    );
    expect(html).toContain(
      '  <fieldset>\n    <legend>Color</legend>\n' +
        '    <label><input type="radio" id="f-color-1" name="color" value="1"> 1</label>\n' +
        '    <label><input type="radio" id="f-color-2" name="color" value="true"> true</label>\n' +
        '    <label><input type="radio" id="f-color-3" name="color" value="a&quot;b"> Quote</label>\n  </fieldset>',
    );
    expect(react).toContain('<input type="radio" id="f-color-3" name="color" value={"a\\"b"} /> Quote</label>');
    // A select without any choice falls back to the control the schema implies.
    expect(control(html, 'f-shade')).toBe('<input id="f-shade" name="shade" type="text">');
    expect(control(html, 'f-when')).toBe('<input id="f-when" name="when" type="datetime-local">');
    expect(control(html, 'f-day')).toBe('<input id="f-day" name="day" type="date">');
    expect(control(html, 'f-count')).toBe('<input id="f-count" name="count" type="number">');
    // Names that sanitize to one id still get distinct ids.
    expect(html).toContain('<label for="f-a-b">A b</label>');
    expect(html).toContain('<label for="f-a-b-2">A b</label>');
    expect(control(html, 'f-a-b-2')).toBe('<input id="f-a-b-2" name="a-b" type="text">');
    expect(labelIds(html)).toHaveLength(8);
  });

  it('renders every widget llms.txt lists as itself', async () => {
    const formId = await createForm(t, key);
    const widgets = [
      'text',
      'email',
      'textarea',
      'number',
      'checkbox',
      'select',
      'radio',
      'url',
      'date',
      'datetime-local',
      'tel',
    ];
    const properties = Object.fromEntries(widgets.map((w) => [`w_${w}`, { type: 'string', enum: ['a', 'b'] }]));
    const ui = Object.fromEntries(widgets.map((w, i) => [`w_${w}`, { widget: w, order: i + 1 }]));
    await publish(formId, { type: 'object', required: ['w_radio'], properties }, ui);
    const { html, nextjs_action } = await embed(formId);
    const id = (w: string) => `f-w_${w}`;
    for (const w of ['text', 'email', 'number', 'checkbox', 'url', 'date', 'datetime-local', 'tel']) {
      expect(control(html, id(w))).toContain(` type="${w}"`);
    }
    expect(control(html, id('textarea'))).toMatch(/^<textarea /);
    expect(control(html, id('select'))).toMatch(/^<select /);
    const radios = html.match(/<input type="radio"[^>]*>/g) ?? [];
    expect(radios).toEqual([
      '<input type="radio" id="f-w_radio-1" name="w_radio" value="a" required>',
      '<input type="radio" id="f-w_radio-2" name="w_radio" value="b" required>',
    ]);
    // The server action posts the form data itself, so the schema types it as it does a browser's post.
    expect(nextjs_action).toContain('body: formData,');
    expect(nextjs_action).not.toContain('JSON.stringify');
  });

  it('follows the current version and the form’s honeypot field', async () => {
    const formId = await createForm(t, key);
    await publish(formId, { type: 'object', properties: { first: { type: 'string' } } });
    expect(labelIds((await embed(formId)).html)).toEqual(['f-first']);
    await publish(formId, { type: 'object', properties: { second: { type: 'boolean' } } });
    const patched = await t.api('PATCH', `/v1/forms/${formId}`, key, { json: { settings: { honeypot_field: 'hp' } } });
    expect(patched.status).toBe(200);
    const e = await embed(formId);
    expect(labelIds(e.html)).toEqual(['f-second']);
    expect(e.html).toContain('<input type="text" name="hp" tabindex="-1"');
    expect(e.html).not.toContain('_gotcha');
    expect(e.react).toContain('name="hp" tabIndex={-1}');
  });

  it('another organization’s form is a 404', async () => {
    const formId = await createForm(t, key);
    await publish(formId, schema, ui);
    const r = await t.api('GET', `/v1/forms/${formId}/embed`, otherKey);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
    expect(r.json.error.hint).toBeTruthy();
    expect(r.text).not.toContain('Work email');
    expect((await t.api('GET', '/v1/forms/fm_01h0000000000000000000000a/embed', key)).status).toBe(404);
    expect((await t.api('GET', `/v1/forms/${formId}/embed`, null)).status).toBe(401);
  });
});
