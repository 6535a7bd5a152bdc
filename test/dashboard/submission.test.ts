import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let formId: string;
let subId: string;
let fileId: string;
beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
  const f = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Contact' } });
  formId = f.json.id;
  const published = await t.api('POST', `/v1/forms/${formId}/schema`, s.key, {
    json: { json_schema: { type: 'object', properties: { name: { type: 'string' }, message: { type: 'string' } } } },
  });
  expect(published.status).toBe(201);
  const d = await t.api('POST', '/v1/destinations', s.key, {
    json: { type: 'webhook', name: 'Hook <i>one</i>', config: { url: 'https://example.com/hook' } },
  });
  expect(d.status).toBe(201);
  expect(
    (await t.api('POST', '/v1/routes', s.key, { json: { form_id: formId, destination_id: d.json.id } })).status,
  ).toBe(201);
  const body = new FormData();
  body.set('name', '<script>alert(1)</script>');
  body.set('message', 'line one\n<img src=x onerror=alert(2)>');
  body.set('surprise', 'not in the schema');
  body.set('doc', new Blob(['file bytes'], { type: 'text/plain' }), 'notes <b>1.txt');
  const r = await t.request('POST', `/s/${formId}`, { body, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  subId = r.json.submission_id;
  fileId = r.json.attachments[0].id;
});
afterAll(() => t.close());

describe('submission page', () => {
  it('shows fields as text, meta, files, deliveries and drift', async () => {
    const r = await s.get(`/app/submissions/${subId}`);
    expect(r.status).toBe(200);
    expect(r.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.html).toContain('&lt;img src=x onerror=alert(2)&gt;');
    expect(r.html).not.toContain('<script>alert(1)');
    expect(r.html).not.toContain('<img src=x');
    expect(r.html).toContain('<dt>surprise</dt>');
    // Meta: origin, user agent, received at.
    expect(r.html).toContain('<dt>received at</dt>');
    expect(r.html).toContain('<dt>user agent</dt>');
    // The file, downloadable with the session (the API's attachment route).
    const href = `/v1/submissions/${subId}/attachments/${fileId}`;
    expect(r.html).toContain(`href="${href}"`);
    expect(r.html).toContain('Download notes &lt;b&gt;1.txt');
    // The file field shows the file's name linked to it, never its bare id.
    expect(r.html).toContain(
      `<dt>doc</dt><dd><a href="${href}" download="notes &lt;b&gt;1.txt">notes &lt;b&gt;1.txt</a></dd>`,
    );
    const inbox = await s.get('/app');
    expect(inbox.html).toContain('1 file');
    expect(inbox.html).not.toContain(`· ${fileId}`);
    const file = await t.app.request(href, { headers: { cookie: s.cookie } });
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('file bytes');
    // The delivery with its destination's name (escaped), status and attempts; pending has no Retry.
    expect(r.html).toContain('Hook &lt;i&gt;one&lt;/i&gt;');
    expect(r.html).toContain('badge-pending');
    expect(r.html).not.toContain('>Retry<');
    // Drift: the field the schema does not declare.
    expect(r.html).toContain('<h2>Drift</h2>');
    expect(r.html).toContain('<code>surprise</code>: new field');
    expect(r.html).toContain('Mark as spam');
  });

  it('marks spam and not spam through the API’s reclassification', async () => {
    const noToken = await s.post(`/app/submissions/${subId}/status`, { status: 'spam' }, { csrf: false });
    expect(noToken.status).toBe(403);
    const bad = await s.post(`/app/submissions/${subId}/status`, { status: 'quarantined' });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('Some fields are not valid.');
    expect((await t.api('GET', `/v1/submissions/${subId}`, s.key)).json.status).toBe('received');

    const spam = await s.post(`/app/submissions/${subId}/status`, { status: 'spam' });
    expect(spam.status).toBe(303);
    expect(spam.location).toBe(`/app/submissions/${subId}?notice=Marked%20as%20spam.`);
    expect((await t.api('GET', `/v1/submissions/${subId}`, s.key)).json.status).toBe('spam');
    const page = await s.get(spam.location ?? '');
    expect(page.html).toContain('Marked as spam.');
    expect(page.html).toContain('>Not spam</button>');
    expect(page.html).not.toContain('Mark as spam');

    const back = await s.post(`/app/submissions/${subId}/status`, { status: 'received' });
    expect(back.status).toBe(303);
    expect((await t.api('GET', `/v1/submissions/${subId}`, s.key)).json.status).toBe('received');
  });

  it('releases a quarantined submission and shows why it was held', async () => {
    const g = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Guarded' } });
    await t.api('PATCH', `/v1/forms/${g.json.id}`, s.key, {
      json: { settings: { allowed_origins: ['https://ok.example'] } },
    });
    const q = await t.request('POST', `/s/${g.json.id}`, {
      json: { email: 'q@example.com' },
      headers: { origin: 'https://bad.example', accept: 'application/json' },
    });
    expect(q.status).toBe(403);
    const id = q.json.error.details.submission_id;
    const r = await s.get(`/app/submissions/${id}`);
    expect(r.html).toContain('quarantined because: origin rejected');
    expect(r.html).toContain('Release from quarantine');
    const rel = await s.post(`/app/submissions/${id}/status`, { status: 'received' });
    expect(rel.status).toBe(303);
    const after = await t.api('GET', `/v1/submissions/${id}`, s.key);
    expect(after.json).toMatchObject({ status: 'received', quarantine_reason: null });
  });

  it('retries a dead delivery', async () => {
    const [d] = (await t.api('GET', `/v1/submissions/${subId}`, s.key)).json.deliveries;
    await t.deps.database.db
      .update(deliveries)
      .set({ status: 'dead', attempts: 7, lastError: 'HTTP 500 <b>boom</b>' })
      .where(eq(deliveries.id, d.id));
    const r = await s.get(`/app/submissions/${subId}`);
    expect(r.html).toContain('badge-dead');
    expect(r.html).toContain('HTTP 500 &lt;b&gt;boom&lt;/b&gt;');
    expect(r.html).toContain('>Retry</button>');
    const action = `/app/submissions/${subId}/deliveries/${d.id}/retry`;
    expect((await s.post(action, {}, { csrf: false })).status).toBe(403);
    const retried = await s.post(action, {});
    expect(retried.status).toBe(303);
    expect(decodeURIComponent(retried.location ?? '')).toContain('The delivery is queued again.');
    const now = (await t.api('GET', `/v1/deliveries/${d.id}`, s.key)).json;
    expect(now).toMatchObject({ status: 'pending', attempts: 0 });
    // A delivery that is not this submission's is not retried from its page.
    const wrong = await s.post(`/app/submissions/${subId}/deliveries/dl_nope/retry`, {});
    expect(wrong.status).toBe(404);
  });

  it('answers another organization’s submission with a 404 page and changes nothing', async () => {
    const other = await t.onboard();
    const f = await t.api('POST', '/v1/forms', other.key, { json: { name: 'Theirs' } });
    const theirs = (
      await t.request('POST', `/s/${f.json.id}`, {
        json: { message: 'private' },
        headers: { accept: 'application/json' },
      })
    ).json.submission_id;
    const r = await s.get(`/app/submissions/${theirs}`);
    expect(r.status).toBe(404);
    expect(r.html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(r.html).toContain('was not found in this organization');
    expect(r.html).not.toContain('private');
    const mark = await s.post(`/app/submissions/${theirs}/status`, { status: 'spam' });
    expect(mark.status).toBe(404);
    expect((await t.api('GET', `/v1/submissions/${theirs}`, other.key)).json.status).toBe('received');
    const retry = await s.post(`/app/submissions/${theirs}/deliveries/dl_x/retry`, {});
    expect(retry.status).toBe(404);
  });
});
