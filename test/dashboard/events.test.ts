import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createForm } from '../helpers/seed.js';

const HOSTILE = '<script>alert(1)</script>';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let other: Awaited<ReturnType<typeof dashboardSession>>;
let streamId: string;

/** Publishes a new stream schema version: one stream.schema.changed event. */
async function publishStreamSchema() {
  const r = await t.api('POST', `/v1/streams/${streamId}/schema`, s.key, {
    json: {
      json_schema: { type: 'object', properties: { email: { type: 'string' } } },
      changelog: HOSTILE,
    },
  });
  expect(r.status).toBe(201);
}

beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
  other = await dashboardSession(t);
  const formId = await createForm(t, s.key);
  const sub = await t.request('POST', `/s/${formId}`, { json: { email: 'ada@example.com', message: HOSTILE } });
  expect(sub.status).toBeLessThan(300);
  const st = await t.api('POST', '/v1/streams', s.key, {
    json: { name: 'Events stream', schema: { json_schema: { type: 'object', properties: {} } } },
  });
  expect(st.status).toBe(201);
  streamId = st.json.id;
});
afterAll(() => t.close());

describe('the event log', () => {
  it("lists the organization's events, newest first, with links to what they are about", async () => {
    await publishStreamSchema();
    const r = await s.get('/app/events');
    expect(r.status).toBe(200);
    expect(r.html).toContain('<code>submission.received</code>');
    expect(r.html).toContain('<code>stream.schema.changed</code>');
    expect(r.html.indexOf('<code>stream.schema.changed</code>')).toBeLessThan(
      r.html.indexOf('<code>submission.received</code>'),
    );
    expect(r.html).toContain(`href="/app/streams/${streamId}"`);
    expect(r.html).not.toContain(HOSTILE);
  });

  it('filters by type and pages with the cursor, keeping the filter', async () => {
    await publishStreamSchema();
    const only = await s.get('/app/events?type=stream.schema.changed&limit=1');
    expect(only.status).toBe(200);
    expect(only.html).not.toContain('<code>submission.received</code>');
    expect(only.html.split('<code>stream.schema.changed</code>').length - 1).toBe(1);
    const next = /href="(\/app\/events\?[^"]*cursor=[^"]+)"/.exec(only.html)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toContain('type=stream.schema.changed');
    const older = await s.get(next as string);
    expect(older.status).toBe(200);
    expect(older.html.split('<code>stream.schema.changed</code>').length - 1).toBe(1);
    expect(older.html).not.toContain('<code>submission.received</code>');
    const r = await s.get('/app/events?type=stream.schema.changed');
    expect(r.html).toContain('<option value="stream.schema.changed" selected="">');
    const none = await s.get('/app/events?type=delivery.dead');
    expect(none.html).toContain('No delivery.dead events');
  });

  it('refuses an unknown type with the API message', async () => {
    const r = await s.get('/app/events?type=nope');
    expect(r.status).toBe(422);
    expect(r.html).toContain('Some filters are not valid');
  });

  it("does not show another organization's events", async () => {
    const r = await other.get('/app/events');
    expect(r.status).toBe(200);
    expect(r.html).not.toContain(streamId);
    expect(r.html).toContain('No events yet');
  });
});

describe('system webhooks', () => {
  let hookId: string;

  it('creates a webhook and shows its generated signing secret once', async () => {
    const r = await s.post('/app/webhooks', {
      url: 'https://hooks.example.com/formsvc',
      events: ['stream.schema.changed', 'delivery.dead'],
      generate: '1',
    });
    expect(r.status).toBe(200);
    const secret = /id="webhook-secret">(whsec_[^<]+)</.exec(r.html)?.[1];
    expect(secret).toBeTruthy();
    expect(r.html).toContain('data-copy="webhook-secret"');
    hookId = /href="\/app\/webhooks\/(wh[^"]+)"/.exec(r.html)?.[1] as string;
    expect(hookId).toBeTruthy();
    const api = await t.api('GET', `/v1/webhooks/${hookId}`, s.key);
    expect(api.json.has_secret).toBe(true);
    for (const path of ['/app/webhooks', `/app/webhooks/${hookId}`]) {
      const again = await s.get(path);
      expect(again.status).toBe(200);
      expect(again.html).toContain('hooks.example.com/formsvc');
      expect(again.html).not.toContain(secret as string);
    }
  });

  it('keeps the values and shows field errors when the URL or events are invalid', async () => {
    const r = await s.post('/app/webhooks', { url: `not a url ${HOSTILE}`, generate: '1' });
    expect(r.status).toBe(422);
    expect(r.html).toContain('value="not a url &lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(r.html).toContain('class="field-error"');
    expect(r.html).toContain('<p class="field-error">Tick at least one event.</p>');
    expect(r.html).not.toContain(HOSTILE);
    expect(r.html).not.toContain('whsec_');
  });

  it("shows the webhook's deliveries, with a status filter", async () => {
    await publishStreamSchema();
    const r = await s.get(`/app/webhooks/${hookId}`);
    expect(r.status).toBe(200);
    const deliveries = r.html.slice(r.html.indexOf('<h2>Deliveries</h2>'));
    expect(deliveries).toContain('<code>stream.schema.changed</code>');
    expect(deliveries).toMatch(/badge-(pending|sending|sent|failed)/);
    const dead = await s.get(`/app/webhooks/${hookId}?status=dead`);
    expect(dead.html).toContain('No deliveries yet');
  });

  it('disables and enables a webhook', async () => {
    const off = await s.post(`/app/webhooks/${hookId}/disable`, {});
    expect(off.status).toBe(303);
    expect((await t.api('GET', `/v1/webhooks/${hookId}`, s.key)).json.enabled).toBe(false);
    expect((await s.get(`/app/webhooks/${hookId}`)).html).toContain('>Enable</button>');
    const on = await s.post(`/app/webhooks/${hookId}/enable`, {});
    expect(on.status).toBe(303);
    expect((await t.api('GET', `/v1/webhooks/${hookId}`, s.key)).json.enabled).toBe(true);
  });

  it('retries dead deliveries, saying when there is none', async () => {
    const none = await s.post(`/app/webhooks/${hookId}/retry`, {});
    expect(none.status).toBe(303);
    expect(decodeURIComponent(none.location ?? '')).toContain('No dead delivery to retry.');
    expect((await other.post(`/app/webhooks/${hookId}/retry`, {})).status).toBe(404);
    const log = await s.get('/app/events?type=deliveries.replayed');
    expect(log.html).toContain('<code>deliveries.replayed</code>');
  });

  it("refuses a request without the page's token", async () => {
    const r = await s.post(`/app/webhooks/${hookId}/disable`, {}, { csrf: false });
    expect(r.status).toBe(403);
    expect((await t.api('GET', `/v1/webhooks/${hookId}`, s.key)).json.enabled).toBe(true);
  });

  it("answers another organization's webhook with a 404, for pages and actions", async () => {
    expect((await other.get(`/app/webhooks/${hookId}`)).status).toBe(404);
    expect((await other.post(`/app/webhooks/${hookId}/disable`, {})).status).toBe(404);
    expect((await other.post(`/app/webhooks/${hookId}/delete`, {})).status).toBe(404);
    expect((await t.api('GET', `/v1/webhooks/${hookId}`, s.key)).status).toBe(200);
  });

  it('deletes a webhook', async () => {
    const r = await s.post(`/app/webhooks/${hookId}/delete`, {});
    expect(r.status).toBe(303);
    expect(r.location).toContain('/app/webhooks?notice=');
    expect((await s.get(`/app/webhooks/${hookId}`)).status).toBe(404);
  });

  it('creates an unsigned webhook without showing a secret', async () => {
    const r = await s.post('/app/webhooks', { url: 'https://hooks.example.com/plain', events: 'delivery.dead' });
    expect(r.status).toBe(200);
    expect(r.html).not.toContain('whsec_');
    expect(r.html).toContain('not signed');
  });
});
