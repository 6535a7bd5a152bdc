import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createForm, orgIdOf, seedSubmission } from '../helpers/seed.js';

const HOSTILE = '<script>alert(1)</script>';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let other: Awaited<ReturnType<typeof dashboardSession>>;
let streamId: string;
let formId: string;
beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
  other = await dashboardSession(t);
  formId = await createForm(t, s.key);
  const created = await t.api('POST', '/v1/streams', s.key, {
    json: {
      name: `Leads ${HOSTILE}`,
      slug: 'leads',
      schema: {
        json_schema: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
      },
      sources: [{ form_id: formId, mapping: { email: { from: 'mail' } } }],
    },
  });
  expect(created.status).toBe(201);
  streamId = created.json.id;
  // Version 2 requires a field the source's mapping does not give: the source becomes incomplete.
  const v2 = await t.api('POST', `/v1/streams/${streamId}/schema`, s.key, {
    json: {
      json_schema: {
        type: 'object',
        required: ['email', 'phone'],
        properties: { email: { type: 'string' }, phone: { type: 'string' } },
      },
    },
  });
  expect(v2.status).toBe(201);
  await seedSubmission(t, {
    orgId: await orgIdOf(t, s.key),
    formId,
    data: { mail: `x${HOSTILE}@example.com`, note: HOSTILE },
  });
});
afterAll(() => t.close());

describe('streams pages', () => {
  it('lists the streams with their counts, the name escaped', async () => {
    const r = await s.get('/app/streams');
    expect(r.status).toBe(200);
    expect(r.html).toContain(`href="/app/streams/${streamId}"`);
    expect(r.html).toContain('Leads &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.html).not.toContain(HOSTILE);
    expect(r.html).toContain('<code>leads</code>');
  });

  it("shows a stream's schema, its sources with mapping status and missing fields, and a mapped preview", async () => {
    const r = await s.get(`/app/streams/${streamId}`);
    expect(r.status).toBe(200);
    expect(r.html).toContain('Version 2');
    expect(r.html).toContain('<code>phone</code>');
    expect(r.html).toContain(`href="/app/forms/${formId}"`);
    expect(r.html).toContain('incomplete');
    // The missing field is listed in the source's row.
    const sources = r.html.slice(r.html.indexOf('id="sources-h"'), r.html.indexOf('id="routes-h"'));
    expect(sources).toContain('<li><code>phone</code></li>');
    // The preview maps mail → email and keeps the unused field as an extra, all as text.
    const preview = r.html.slice(r.html.indexOf('id="preview-h"'));
    expect(preview).toContain('&quot;email&quot;: &quot;x&lt;script&gt;alert(1)&lt;/script&gt;@example.com&quot;');
    expect(preview).toContain('&quot;note&quot;');
    expect(r.html).not.toContain(HOSTILE);
  });

  it("answers another organization's stream with a 404 page", async () => {
    const r = await other.get(`/app/streams/${streamId}`);
    expect(r.status).toBe(404);
    expect(r.html).toContain('<!DOCTYPE html>');
    expect(r.html).not.toContain('Leads');
  });

  it('shows an empty state that says what to do when there is no stream', async () => {
    const r = await other.get('/app/streams');
    expect(r.status).toBe(200);
    expect(r.html).toContain('No streams yet');
    expect(r.html).toContain('POST /v1/streams');
  });

  it('refuses a cursor that is not one, as the API does', async () => {
    const r = await s.get('/app/streams?cursor=nope');
    expect(r.status).toBe(422);
    expect(r.html).toContain('cursor');
  });
});
