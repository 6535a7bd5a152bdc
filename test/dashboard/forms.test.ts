import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let other: Awaited<ReturnType<typeof dashboardSession>>;

beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
  other = await dashboardSession(t);
});
afterAll(() => t.close());

/** POST /app/forms as the new-form dialog sends it: no project, no tags, schema mode observe unless given. */
const newForm = (name: string, fields: Record<string, string> = {}) =>
  s.post('/app/forms', { name, project: '', tags: '', schema_mode: 'observe', ...fields });

/** Creates a form through the dashboard and answers its id (from the redirect). */
async function createForm(name: string) {
  const r = await newForm(name);
  expect(r.status).toBe(303);
  const id = /^\/app\/forms\/(fm_[^?]+)\?notice=/.exec(r.location ?? '')?.[1];
  expect(id).toBeTruthy();
  return id as string;
}

const api = (method: string, path: string, json?: unknown) => t.api(method, path, s.key, { json });
const submit = (id: string, data: Record<string, unknown>) => t.request('POST', `/s/${id}`, { json: data });

describe('forms list and create', () => {
  it('shows an empty state first, then each form with its submission count', async () => {
    const empty = await s.get('/app/forms');
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('No forms yet');

    const id = await createForm('Counted');
    for (let i = 0; i < 3; i++)
      expect((await submit(id, { email: `p${i}@example.com`, message: 'hi' })).status).toBe(200);
    await submit(id, { email: 'test@example.com', message: 'hi', _test: true });
    const list = await s.get('/app/forms');
    expect(list.status).toBe(200);
    const row = list.html.slice(list.html.indexOf(`href="/app/forms/${id}"`));
    const cells = row.slice(0, row.indexOf('</tr>'));
    expect(cells).toContain('Counted');
    // Three stored submissions; the test one is not counted (the API's counts).
    expect(cells).toContain('<td>3</td>');
    expect(cells).toContain('datetime=');
  });

  it('creates a form with a project, tags and a schema mode through the API’s service', async () => {
    const created = await newForm('Contact us', { project: 'site', tags: 'a, b', schema_mode: 'enforce' });
    expect(created.status).toBe(303);
    const id = /^\/app\/forms\/(fm_[^?]+)\?notice=/.exec(created.location ?? '')?.[1];
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({
      name: 'Contact us',
      tags: ['a', 'b'],
      schema_mode: 'enforce',
      slug: 'contact-us',
    });
    const projects = await api('GET', '/v1/projects');
    expect(projects.json.data.find((p: { id: string }) => p.id === got.json.project_id).slug).toBe('site');
    const page = await s.get(created.location as string);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Form created');
  });

  it('keeps the values and shows the field error when the name is missing or the slug is taken', async () => {
    const r = await newForm('', { project: 'keep-project', tags: 'keep, me', schema_mode: 'managed' });
    expect(r.status).toBe(422);
    expect(r.html).toContain('value="keep-project"');
    expect(r.html).toContain('value="keep, me"');
    expect(r.html).toMatch(/<option value="managed" selected/);
    expect(r.html).toMatch(/id="nf-name"[^>]*aria-invalid="true"/);
    expect(r.html).toMatch(/<div id="nf-name-err"><p class="field-error">[^<]+<\/p>/);

    await createForm('Twice');
    const again = await newForm('Twice');
    expect(again.status).toBe(409);
    expect(again.html).toContain('exists already');
    expect(again.html).toContain('value="Twice"');
  });

  it('refuses a create without the page token', async () => {
    const r = await s.post('/app/forms', { name: 'No token' }, { csrf: false });
    expect(r.status).toBe(403);
    const list = await api('GET', '/v1/forms');
    expect(list.json.data.some((f: { name: string }) => f.name === 'No token')).toBe(false);
  });

  it('renders a hostile form name as text', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    const id = await createForm(evil);
    for (const path of ['/app/forms', `/app/forms/${id}`, `/app/forms/${id}/schema`]) {
      const r = await s.get(path);
      expect(r.status).toBe(200);
      expect(r.html).not.toContain('<img src=x');
      expect(r.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    }
  });
});

describe('a form’s settings and embed', () => {
  it('shows the embed snippets the API gives, each with a Copy button, and links the hosted page', async () => {
    const id = await createForm('Embedded');
    const r = await s.get(`/app/forms/${id}`);
    const embed = await api('GET', `/v1/forms/${id}/embed`);
    for (const key of ['html', 'fetch', 'react', 'astro', 'nextjs_action']) {
      expect(r.html).toContain(`data-copy="embed-${key}"`);
      expect(embed.json[key]).toBeTruthy();
    }
    // The HTML snippet is shown as text (escaped), not as a live form on the page.
    expect(r.html).toContain(`&lt;form action=&quot;http://127.0.0.1:8787/s/${id}&quot; method=&quot;POST&quot;&gt;`);
    expect(r.html).toContain(`href="/f/${id}"`);
    expect(r.html).toContain('data-copy="submit-url"');
  });

  it('saves every setting through PATCH’s service and shows them again', async () => {
    const id = await createForm('Configured');
    const r = await s.post(`/app/forms/${id}/settings`, {
      name: 'Configured 2',
      tags: 'x, y',
      schema_mode: 'enforce',
      paused: 'on',
      allowed_origins: 'https://a.example\nhttps://b.example',
      rate_max: '5',
      rate_window: '60',
      honeypot_field: 'hp',
      redirect_url: 'https://a.example/thanks',
      reply_to_field: 'email',
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/app/forms/${id}?notice=Settings%20saved.`);
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json).toMatchObject({
      name: 'Configured 2',
      tags: ['x', 'y'],
      status: 'paused',
      schema_mode: 'enforce',
      settings: {
        allowed_origins: ['https://a.example', 'https://b.example'],
        rate_limit: { max: 5, window_s: 60 },
        honeypot_field: 'hp',
        redirect_url: 'https://a.example/thanks',
        reply_to_field: 'email',
      },
    });
    const page = await s.get(`/app/forms/${id}`);
    expect(page.html).toMatch(/id="s-paused"[^>]*checked/);
    expect(page.html).toContain('value="https://a.example/thanks"');
    // The embed follows the honeypot setting, as GET /v1/forms/{id}/embed does.
    expect(page.html).toContain('name=&quot;hp&quot;');

    // Emptying the optional fields clears them; the form becomes active again.
    const cleared = await s.post(`/app/forms/${id}/settings`, {
      name: 'Configured 2',
      tags: '',
      schema_mode: 'enforce',
      allowed_origins: '',
      rate_max: '',
      rate_window: '',
      honeypot_field: '',
      redirect_url: '',
      reply_to_field: '',
    });
    expect(cleared.status).toBe(303);
    const after = await api('GET', `/v1/forms/${id}`);
    expect(after.json.status).toBe('active');
    expect(after.json.tags).toEqual([]);
    expect(after.json.settings).toEqual({ allowed_origins: [], honeypot_field: 'hp' });
  });

  it('shows invalid settings next to their fields with the values kept, and stores nothing', async () => {
    const id = await createForm('Strict');
    const r = await s.post(`/app/forms/${id}/settings`, {
      name: 'Strict renamed',
      tags: '',
      schema_mode: 'observe',
      allowed_origins: '',
      rate_max: 'lots',
      rate_window: '60',
      honeypot_field: '',
      redirect_url: 'not a url',
      reply_to_field: '',
    });
    expect(r.status).toBe(422);
    expect(r.html).toContain('value="Strict renamed"');
    expect(r.html).toContain('value="not a url"');
    expect(r.html).toContain('value="lots"');
    expect(r.html).toMatch(/id="s-redirect"[^>]*aria-invalid="true"/);
    expect(r.html).toMatch(/<div id="s-redirect-err"><p class="field-error">[^<]+<\/p>/);
    expect(r.html).toMatch(/<div id="s-rate-max-err"><p class="field-error">[^<]+<\/p>/);
    expect(r.html).not.toContain('id="s-rate-window-err"');
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json.name).toBe('Strict');
    expect(got.json.settings).toEqual({});
  });

  it('answers another organization’s form with a 404 page, on every page and action', async () => {
    const id = await createForm('Private');
    for (const path of [`/app/forms/${id}`, `/app/forms/${id}/schema`]) {
      const r = await other.get(path);
      expect(r.status).toBe(404);
      expect(r.html).not.toContain('Private');
    }
    const posts: Array<[string, Record<string, string>]> = [
      [`/app/forms/${id}/settings`, { name: 'Taken over', schema_mode: 'observe' }],
      [`/app/forms/${id}/schema`, { json_schema: '{"type":"object"}' }],
      [`/app/forms/${id}/schema/infer`, {}],
      [`/app/forms/${id}/drift/dr_x/dismiss`, {}],
    ];
    for (const [path, fields] of posts) {
      const r = await other.post(path, fields);
      expect(r.status).toBe(404);
    }
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json.name).toBe('Private');
    expect(got.json.current_schema_version).toBeNull();
  });
});

describe('schema versions, publishing, inference and drift', () => {
  it('publishes a version from the editor, lists it, and shows it', async () => {
    const id = await createForm('Versioned');
    const first = await s.get(`/app/forms/${id}/schema`);
    expect(first.html).toContain('No version yet');
    const schema = { type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'] };
    const r = await s.post(`/app/forms/${id}/schema`, {
      json_schema: JSON.stringify(schema),
      ui: '{"email":{"label":"Your email"}}',
      changelog: 'First <b>cut</b>',
      inferred: 'false',
    });
    expect(r.status).toBe(303);
    expect(r.location).toContain('Version%201%20published');
    const current = await api('GET', `/v1/forms/${id}/schema`);
    expect(current.json).toMatchObject({
      version: 1,
      json_schema: schema,
      ui: { email: { label: 'Your email' } },
      inferred: false,
    });
    const page = await s.get(`/app/forms/${id}/schema`);
    expect(page.html).toContain('View version 1');
    expect(page.html).toContain('First &lt;b&gt;cut&lt;/b&gt;');
    expect(page.html).toContain('Your email');
  });

  it('shows a JSON parse error with its line and column next to the editor, keeping the text', async () => {
    const id = await createForm('Broken JSON');
    const text = '{\n  "type": "object",\n}';
    const r = await s.post(`/app/forms/${id}/schema`, { json_schema: text, ui: '', changelog: 'oops' });
    expect(r.status).toBe(422);
    expect(r.html).toMatch(
      /<div id="ed-schema-err"><p class="field-error">Invalid JSON at line 3, column 1: [^<]+<\/p>/,
    );
    expect(r.html).toMatch(/id="ed-schema"[^>]*aria-invalid="true"/);
    expect(r.html).toContain('value="oops"');
    expect(r.html).toContain('object&quot;,\n}</textarea>');
    const ui = await s.post(`/app/forms/${id}/schema`, { json_schema: '{"type":"object"}', ui: '{"a":' });
    expect(ui.status).toBe(422);
    expect(ui.html).toMatch(/<div id="ed-ui-err"><p class="field-error">Invalid JSON at line 1, column 6/);
    expect(ui.html).not.toContain('id="ed-schema-err"');
    expect((await api('GET', `/v1/forms/${id}/schema`)).status).toBe(404);
  });

  it('shows the service’s schema errors next to the editor', async () => {
    const id = await createForm('Bad schema');
    const notObject = await s.post(`/app/forms/${id}/schema`, { json_schema: '{"type":"string"}' });
    expect(notObject.status).toBe(422);
    expect(notObject.html).toContain('json_schema must describe an object');
    expect(notObject.html).toMatch(/<div id="ed-schema-err"><p class="field-error">is &quot;string&quot;/);
    const uncompilable = await s.post(`/app/forms/${id}/schema`, {
      json_schema: '{"type":"object","properties":{"age":{"type":"nope"}}}',
    });
    expect(uncompilable.status).toBe(422);
    expect(uncompilable.html).toContain('json_schema does not compile');
    expect(uncompilable.html).toContain('id="ed-schema-err"');
    const array = await s.post(`/app/forms/${id}/schema`, { json_schema: '[1]' });
    expect(array.status).toBe(422);
    expect(array.html).toContain('id="ed-schema-err"');
    expect((await api('GET', `/v1/forms/${id}/schema`)).status).toBe(404);
  });

  it('infers a draft from traffic into the editor, and publishes it flagged inferred', async () => {
    const id = await createForm('Inferred');
    const none = await s.post(`/app/forms/${id}/schema/infer`, {});
    expect(none.status).toBe(422);
    expect(none.html).toContain('no received submissions');
    for (let i = 0; i < 3; i++) await submit(id, { email: `i${i}@example.com`, plan: 'pro', seats: i + 1 });
    const r = await s.post(`/app/forms/${id}/schema/infer`, {});
    expect(r.status).toBe(200);
    expect(r.html).toContain('Draft inferred from 3 submissions');
    const editor = /<textarea id="ed-schema"[^>]*>([^<]*)<\/textarea>/.exec(r.html)?.[1] ?? '';
    const draft = JSON.parse(editor.replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
    const direct = await api('POST', `/v1/forms/${id}/schema/infer`, {});
    expect(draft).toEqual(direct.json.draft.json_schema);
    expect(r.html).toContain('name="inferred" value="true"');
    const ui = /<textarea id="ed-ui"[^>]*>([^<]*)<\/textarea>/.exec(r.html)?.[1] ?? '';
    const published = await s.post(`/app/forms/${id}/schema`, {
      json_schema: JSON.stringify(draft),
      ui: ui.replace(/&quot;/g, '"').replace(/&amp;/g, '&'),
      changelog: direct.json.draft.changelog,
      inferred: 'true',
    });
    expect(published.status).toBe(303);
    const current = await api('GET', `/v1/forms/${id}/schema`);
    expect(current.json).toMatchObject({ version: 1, inferred: true, json_schema: direct.json.draft.json_schema });
  });

  it('lists open drift and dismisses it', async () => {
    const id = await createForm('Drifting');
    const schema = { type: 'object', properties: { email: { type: 'string' } } };
    expect((await s.post(`/app/forms/${id}/schema`, { json_schema: JSON.stringify(schema) })).status).toBe(303);
    expect((await submit(id, { email: 'a@example.com', '<b>extra</b>': 'x' })).status).toBe(200);
    const open = await api('GET', `/v1/forms/${id}/drift`);
    expect(open.json.data).toHaveLength(1);
    const drift = open.json.data[0];
    const page = await s.get(`/app/forms/${id}/schema`);
    expect(page.html).toContain('&lt;b&gt;extra&lt;/b&gt;');
    expect(page.html).not.toContain('<b>extra</b>');
    expect(page.html).toContain(`action="/app/forms/${id}/drift/${drift.id}/dismiss"`);

    const noToken = await s.post(`/app/forms/${id}/drift/${drift.id}/dismiss`, {}, { csrf: false });
    expect(noToken.status).toBe(403);
    const r = await s.post(`/app/forms/${id}/drift/${drift.id}/dismiss`, {});
    expect(r.status).toBe(303);
    expect(r.location).toContain(`/app/forms/${id}/schema`);
    const after = await api('GET', `/v1/forms/${id}/drift?status=all`);
    expect(after.json.data[0].status).toBe('dismissed');
    expect((await s.get(`/app/forms/${id}/schema`)).html).toContain('No open drift');
    // Dismissing it again is the API's conflict, shown as a page that says why.
    const again = await s.post(`/app/forms/${id}/drift/${drift.id}/dismiss`, {});
    expect(again.status).toBe(409);
    expect(again.html).toContain('dismissed already');
  });
});
