import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
});
afterAll(() => t.close());

const submit = (formId: string, json: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', `/s/${formId}`, { json, headers: { accept: 'application/json', ...headers } });

/** The rows of the inbox's table body. */
const rowsOf = (html: string) => /<tbody id="inbox-rows"[^>]*>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';

describe('inbox', () => {
  let contact: string;
  let guarded: string;

  it('an organization without forms says how to make one', async () => {
    const r = await s.get('/app');
    expect(r.status).toBe(200);
    expect(r.html).toContain('<h1>Inbox</h1>');
    expect(r.html).toContain('No forms yet');
    expect(r.html).toContain('href="/app/forms"');
  });

  it('an empty inbox shows the form’s embed and sends a test submission', async () => {
    const f = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Contact <us>' } });
    expect(f.status).toBe(201);
    contact = f.json.id;
    const r = await s.get('/app');
    expect(r.html).toContain('Nothing here yet');
    // The embed snippet as text (escaped), with a copy button, and the test button.
    expect(r.html).toContain(
      `&lt;form action=&quot;http://127.0.0.1:8787/s/${contact}&quot; method=&quot;POST&quot;&gt;`,
    );
    expect(r.html).toContain('data-copy="embed-html"');
    expect(r.html).toContain('Contact &lt;us&gt;');
    expect(r.html).toContain('Send a test submission');
    expect(r.html).toContain('No submissions yet.');

    const noToken = await s.post('/app/inbox/test', { form_id: contact }, { csrf: false });
    expect(noToken.status).toBe(403);
    const other = await t.onboard();
    const foreignForm = await t.api('POST', '/v1/forms', other.key, { json: { name: 'Theirs' } });
    const foreign = await s.post('/app/inbox/test', { form_id: foreignForm.json.id });
    expect(foreign.status).toBe(404);
    expect(foreign.html).toContain('was not found in this organization');

    const sent = await s.post('/app/inbox/test', { form_id: contact });
    expect(sent.status).toBe(303);
    expect(decodeURIComponent(sent.location ?? '')).toContain('was stored as received');
    const list = await t.api('GET', '/v1/submissions', s.key);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0]).toMatchObject({ form_id: contact, test: true, status: 'received' });
    const after = await s.get('/app');
    expect(after.html).not.toContain('Nothing here yet');
    expect(rowsOf(after.html)).toContain('badge-test');
    expect(rowsOf(after.html)).toContain(`/app/submissions/${list.json.data[0].id}`);
  });

  it('lists newest first with status, quarantine reason and hostile data as text', async () => {
    const g = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Guarded' } });
    guarded = g.json.id;
    const p = await t.api('PATCH', `/v1/forms/${guarded}`, s.key, {
      json: { settings: { allowed_origins: ['https://ok.example'] } },
    });
    expect(p.status).toBe(200);
    expect((await submit(contact, { name: '<script>alert(1)</script>', email: 'x@example.com' })).status).toBe(200);
    expect((await submit(contact, { email: 'bot@example.com', message: 'buy zebra', _gotcha: 'x' })).status).toBe(200);
    const q = await submit(
      guarded,
      { email: 'q@example.com', message: 'from elsewhere' },
      { origin: 'https://bad.example' },
    );
    expect(q.status).toBe(403);

    const r = await s.get('/app');
    const rows = rowsOf(r.html);
    expect(rows).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.html).not.toContain('<script>alert(1)');
    expect(rows).toContain('badge-quarantined');
    expect(rows).toContain('origin rejected');
    expect(rows).toContain('badge-spam');
    expect(rows).toContain('from elsewhere');
    // Newest first: the quarantined one (last in) before the spam one, before the hostile one.
    expect(rows.indexOf('from elsewhere')).toBeLessThan(rows.indexOf('buy zebra'));
    expect(rows.indexOf('buy zebra')).toBeLessThan(rows.indexOf('alert(1)'));
    // The live region polls the rows route with the same filters.
    expect(r.html).toContain('data-poll="/app/inbox/rows"');
  });

  it('filters by status, form, test and search, and the live rows keep the filters', async () => {
    const spam = await s.get('/app?status=spam');
    expect(rowsOf(spam.html)).toContain('buy zebra');
    expect(rowsOf(spam.html)).not.toContain('alert(1)');
    expect(spam.html).toContain('<option value="spam" selected="">spam</option>');
    expect(spam.html).toContain('data-poll="/app/inbox/rows?status=spam"');

    const quarantined = await s.get(`/app?status=quarantined&form_id=${guarded}`);
    expect(rowsOf(quarantined.html)).toContain('from elsewhere');
    expect(rowsOf(quarantined.html)).not.toContain('buy zebra');

    const tests = await s.get('/app?test=true');
    expect(rowsOf(tests.html).match(/<tr>/g)).toHaveLength(1);
    const real = await s.get('/app?test=false&form_id=');
    expect(rowsOf(real.html).match(/<tr>/g)).toHaveLength(3);

    const search = await s.get('/app?q=zebra');
    expect(rowsOf(search.html)).toContain('buy zebra');
    expect(rowsOf(search.html).match(/<tr>/g)).toHaveLength(1);
    const none = await s.get('/app?q=nothingmatchesthis');
    expect(rowsOf(none.html)).toContain('No submission matches these filters.');
    expect(none.html).not.toContain('Nothing here yet');

    const fragment = await s.get('/app/inbox/rows?status=spam');
    expect(fragment.status).toBe(200);
    expect(fragment.html.startsWith('<tr>')).toBe(true);
    expect(fragment.html).toContain('buy zebra');
    expect(fragment.html).not.toContain('alert(1)');
    expect(fragment.html).not.toContain('<html');
  });

  it('pages by cursor, and only the first page is live', async () => {
    const first = await s.get('/app?limit=2');
    const older = /href="(\/app\?limit=2&amp;cursor=sb_[^"]+)"/.exec(first.html)?.[1];
    expect(older).toBeTruthy();
    const second = await s.get((older ?? '').replace(/&amp;/g, '&'));
    expect(second.status).toBe(200);
    expect(second.html).not.toContain('data-poll=');
    expect(second.html).toContain('href="/app?limit=2">Newest</a>');
    const ids = (html: string) => [...rowsOf(html).matchAll(/\/app\/submissions\/(sb_\w+)/g)].map((m) => m[1]);
    expect(ids(first.html)).toHaveLength(2);
    expect(ids(second.html)).toHaveLength(2);
    expect(ids(second.html).some((id) => ids(first.html).includes(id))).toBe(false);
  });

  it('answers bad filters with a page, not an error', async () => {
    const r = await s.get('/app?status=bogus');
    expect(r.status).toBe(422);
    expect(r.html).toContain('Some filters are not valid.');
    expect(r.html).toContain('<code>status</code>');
    const cursor = await s.get('/app?cursor=nope');
    expect(cursor.status).toBe(422);
    expect(cursor.html).toContain('cursor is not a cursor of this list.');
  });

  it('never shows another organization’s submissions', async () => {
    const other = await t.onboard();
    const f = await t.api('POST', '/v1/forms', other.key, { json: { name: 'Elsewhere' } });
    await submit(f.json.id, { email: 'o@example.com', message: 'secretword from them' });
    const r = await s.get('/app?q=secretword');
    expect(rowsOf(r.html)).toContain('No submission matches these filters.');
    const forged = await s.get(`/app?form_id=${f.json.id}`);
    expect(forged.html).not.toContain('secretword');
    const rows = await s.get('/app/inbox/rows?q=secretword');
    expect(rows.html).not.toContain('secretword from them');
  });

  it('sends a signed-out poll to sign-in', async () => {
    const r = await t.app.request('/app/inbox/rows');
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toMatch(/^\/app\/sign-in\?next=/);
  });
});
