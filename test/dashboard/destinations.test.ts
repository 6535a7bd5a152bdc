import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { startReceiver } from '../helpers/receiver.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let hook: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '2000' });
  s = await dashboardSession(t);
  hook = await startReceiver();
});
afterAll(async () => {
  await hook.close();
  await t.close();
});

const uniq = (p: string) => `${p} ${crypto.randomUUID().slice(0, 6)}`;

/** The API's view of this organization's destinations. */
async function apiDestinations() {
  const r = await t.api('GET', '/v1/destinations?limit=200', s.key);
  expect(r.status).toBe(200);
  return r.json.data as Array<{ id: string; name: string; type: string; config: any; enabled: boolean }>;
}

async function createWebhook(name: string, fields: Record<string, string> = {}) {
  const r = await s.post('/app/destinations', { type: 'webhook', name, url: hook.url, sign: 'on', ...fields });
  expect(r.status).toBe(200);
  const d = (await apiDestinations()).find((x) => x.name === name);
  if (!d) throw new Error(`destination ${name} was not created`);
  return { ...r, id: d.id };
}

/** The route page's form as the browser sends it: with `_sent`, a box left out is unticked, not defaulted. */
const postRoute = (path: string, destinationId: string, fields: Record<string, string>) =>
  s.post(path, { _sent: '1', destination_id: destinationId, ...fields });

describe('destinations pages', () => {
  it('shows an empty list that says what to do, and a create page with a form for every type', async () => {
    const empty = await s.get('/app/destinations');
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('No destinations yet');
    const page = await s.get('/app/destinations/new');
    for (const type of ['email', 'telegram', 'webhook', 'slack', 'discord']) {
      expect(page.html).toContain(`name="type" value="${type}"`);
    }
    const one = await s.get('/app/destinations/new?type=telegram');
    expect(one.html).toContain('name="bot_token"');
    expect(one.html).not.toContain('value="webhook"');
  });

  it('creates every type through the same contract and service as the API, showing its warnings', async () => {
    const names = { email: uniq('Mail'), telegram: uniq('Tg'), slack: uniq('Slack'), discord: uniq('Discord') };
    const email = await s.post('/app/destinations', {
      type: 'email',
      name: names.email,
      to: 'a@example.com, b@example.com',
      cc: '',
      subject_template: 'New {{form.name}}',
    });
    expect(email.status).toBe(200);
    expect(email.html).toContain(names.email);
    const tg = await s.post('/app/destinations', {
      type: 'telegram',
      name: names.telegram,
      bot_token: '123:abc',
      chat_id: '@team',
    });
    expect(tg.status).toBe(200);
    const slack = await s.post('/app/destinations', { type: 'slack', name: names.slack, url: hook.url });
    expect(slack.status).toBe(200);
    // A Slack URL off hooks.slack.com is accepted with the API's warning, shown on the page.
    expect(slack.html).toContain('not https://hooks.slack.com/');
    const discord = await s.post('/app/destinations', {
      type: 'discord',
      name: names.discord,
      url: 'https://discord.com/api/webhooks/1/x',
      template: 'Hi',
    });
    expect(discord.status).toBe(200);
    expect(discord.html).not.toContain('role="alert"');
    await createWebhook(uniq('Hook'));

    const all = await apiDestinations();
    const by = (n: string) => all.find((d) => d.name === n);
    expect(by(names.email)?.config).toMatchObject({
      to: ['a@example.com', 'b@example.com'],
      subject_template: 'New {{form.name}}',
    });
    expect(by(names.email)?.config.cc).toBeUndefined();
    expect(by(names.telegram)?.config).toEqual({ bot_token: '[redacted]', chat_id: '@team' });
    // A chat webhook URL is a credential: read back as its host and last 4 characters.
    expect(by(names.slack)?.config).toEqual({ url: `${new URL(hook.url).origin}/[redacted]…${hook.url.slice(-4)}` });
    expect(by(names.discord)).toMatchObject({ type: 'discord', config: { template: 'Hi' } });
    expect(all.some((d) => d.type === 'webhook')).toBe(true);

    const list = await s.get('/app/destinations');
    for (const n of Object.values(names)) expect(list.html).toContain(n);
  });

  it('answers a validation error with 422, the fields kept and the error next to the field', async () => {
    const before = (await apiDestinations()).length;
    const r = await s.post('/app/destinations', {
      type: 'webhook',
      name: 'Keep this name',
      url: 'not a url',
      sign: 'on',
      headers: 'X-One: 1',
    });
    expect(r.status).toBe(422);
    expect(r.html).toContain('value="Keep this name"');
    expect(r.html).toContain('value="not a url"');
    expect(r.html).toContain('X-One: 1');
    expect(r.html).toMatch(/id="webhook-url"[^>]*aria-invalid="true"/);
    expect(r.html).toContain('id="webhook-url-error"');
    const mail = await s.post('/app/destinations', { type: 'email', name: '', to: 'nobody' });
    expect(mail.status).toBe(422);
    expect(mail.html).toContain('id="email-to-error"');
    expect(mail.html).toContain('id="email-name-error"');
    expect(mail.html).toContain('value="nobody"');
    const header = await s.post('/app/destinations', { type: 'webhook', name: 'h', url: hook.url, headers: 'oops' });
    expect(header.status).toBe(422);
    expect(header.html).toContain('is not &quot;Name: value&quot;');
    expect((await apiDestinations()).length).toBe(before);
  });

  it('shows a generated signing secret once, right after creation, and never again; deliveries are signed with it', async () => {
    const name = uniq('Signed');
    const created = await createWebhook(name);
    const secret = /id="signing-secret">(whsec_[^<]+)</.exec(created.html)?.[1];
    expect(secret).toBeTruthy();
    expect(created.html).toContain('data-copy="signing-secret"');
    const again = await s.get(`/app/destinations/${created.id}`);
    expect(again.status).toBe(200);
    expect(again.html).toContain(name);
    expect(again.html).not.toContain(secret as string);
    expect(again.html).not.toContain('whsec_');
    expect(again.html).toContain('[redacted]');
    expect((await s.get('/app/destinations')).html).not.toContain(secret as string);

    // The secret shown is the one stored: the test send's signature verifies with it.
    const before = hook.requests.length;
    hook.set(() => ({ status: 200, body: 'ok' }));
    const test = await s.post(`/app/destinations/${created.id}/test`, {});
    expect(test.status).toBe(200);
    const req = hook.requests[before];
    const sig = String(req.headers['service-signature']);
    const ts = /t=(\d+)/.exec(sig)?.[1];
    const mac = crypto
      .createHmac('sha256', secret as string)
      .update(`${ts}.${req.raw.toString('utf8')}`)
      .digest('hex');
    expect(sig).toContain(`v1=${mac}`);
    expect(test.html).not.toContain(secret as string);

    // Unsigned on request: no secret, none shown.
    const plain = await createWebhook(uniq('Unsigned'), { sign: '' });
    expect(plain.html).not.toContain('whsec_');
    expect((await apiDestinations()).find((d) => d.id === plain.id)?.config.secret).toBeUndefined();
  });

  it('sends a test to a real receiver and shows what it answered; a success marks it verified', async () => {
    const { id } = await createWebhook(uniq('Tested'));
    hook.set(() => ({ status: 500, body: 'receiver says <b>no</b>' }));
    const failed = await s.post(`/app/destinations/${id}/test`, {});
    expect(failed.status).toBe(200);
    expect(failed.html).toContain('Test result');
    expect(failed.html).toContain('HTTP 500');
    expect(failed.html).toContain('receiver says &lt;b&gt;no&lt;/b&gt;');
    expect(failed.html).toContain('not verified');

    const before = hook.requests.length;
    hook.set(() => ({ status: 200, body: 'fine' }));
    const ok = await s.post(`/app/destinations/${id}/test`, {});
    expect(ok.html).toContain('HTTP 200');
    expect(hook.requests.length).toBe(before + 1);
    expect(hook.requests[before].headers['service-event']).toBe('destination.test');
    expect(ok.html).toContain('badge-verified');
    const api = await t.api('GET', `/v1/destinations/${id}`, s.key);
    expect(api.json).toMatchObject({ verified: true, health: 'ok' });
  });

  it('disables and enables a destination through the API update', async () => {
    const { id } = await createWebhook(uniq('Switch'));
    const off = await s.post(`/app/destinations/${id}/enabled`, { enabled: 'false' });
    expect(off.status).toBe(303);
    expect(off.location).toMatch(new RegExp(`^/app/destinations/${id}\\?notice=Disabled`));
    expect((await t.api('GET', `/v1/destinations/${id}`, s.key)).json).toMatchObject({
      enabled: false,
      disabled_reason: expect.any(String),
    });
    const page = await s.get(`/app/destinations/${id}`);
    expect(page.html).toContain('badge-disabled');
    expect(page.html).toContain('name="enabled" value="true"');
    const on = await s.post(`/app/destinations/${id}/enabled`, { enabled: 'true' });
    expect(on.status).toBe(303);
    expect((await t.api('GET', `/v1/destinations/${id}`, s.key)).json.enabled).toBe(true);
  });

  it('creates, edits and deletes a route, refusing an invalid digest cron with the values kept', async () => {
    const { id: destId } = await createWebhook(uniq('Routed'));
    const form = await t.api('POST', '/v1/forms', s.key, { json: { name: uniq('Contact') } });
    expect(form.status).toBe(201);
    const formId = form.json.id as string;

    const newPage = await s.get(`/app/routes/new?destination_id=${destId}`);
    expect(newPage.status).toBe(200);
    expect(newPage.html).toContain(`value="form:${formId}"`);

    const bad = await postRoute('/app/routes', destId, {
      source: `form:${formId}`,
      mode: 'digest',
      cron: 'every tuesday',
      timezone: 'Mars/Olympus',
      enabled: 'on',
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('value="every tuesday"');
    expect(bad.html).toContain('id="route-cron-error"');
    expect(bad.html).toContain('invalid cron expression');
    expect(bad.html).toContain('unknown time zone');
    expect(bad.html).toMatch(/id="mode-digest"[^>]*checked/);
    expect(bad.html).not.toMatch(/id="route-spam"[^>]*checked/);
    expect((await t.api('GET', `/v1/routes?destination_id=${destId}`, s.key)).json.data).toHaveLength(0);

    const noSource = await postRoute('/app/routes', destId, { source: '', mode: 'instant' });
    expect(noSource.status).toBe(422);
    expect(noSource.html).toContain('id="route-source-error"');

    const made = await postRoute('/app/routes', destId, {
      source: `form:${formId}`,
      mode: 'instant',
      timezone: 'UTC',
      from: '2026-01-01T00:00',
      exclude_spam: 'on',
      enabled: 'on',
    });
    expect(made.status).toBe(303);
    expect(made.location).toMatch(new RegExp(`^/app/destinations/${destId}\\?notice=Route`));
    const [route] = (await t.api('GET', `/v1/routes?destination_id=${destId}`, s.key)).json.data;
    expect(route).toMatchObject({
      form_id: formId,
      mode: { type: 'instant' },
      enabled: true,
      window: { from: '2026-01-01T00:00:00.000Z', until: null },
      quality: { exclude_spam: true, exclude_quarantined: false },
    });

    const destPage = await s.get(`/app/destinations/${destId}`);
    expect(destPage.html).toContain(`/app/routes/${route.id}`);
    expect(destPage.html).toContain(form.json.name);
    const routes = await s.get('/app/routes');
    expect(routes.html).toContain(`/app/routes/${route.id}`);

    const edit = await s.get(`/app/routes/${route.id}`);
    expect(edit.status).toBe(200);
    expect(edit.html).toContain('value="2026-01-01T00:00"');
    const badEdit = await postRoute(`/app/routes/${route.id}`, destId, {
      mode: 'digest',
      cron: '61 * * * *',
      timezone: 'UTC',
      enabled: 'on',
    });
    expect(badEdit.status).toBe(422);
    expect(badEdit.html).toContain('value="61 * * * *"');
    expect(badEdit.html).toContain('id="route-cron-error"');
    const saved = await postRoute(`/app/routes/${route.id}`, destId, {
      mode: 'digest',
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
      from: '',
      exclude_spam: 'on',
      exclude_quarantined: 'on',
    });
    expect(saved.status).toBe(303);
    expect((await t.api('GET', `/v1/routes/${route.id}`, s.key)).json).toMatchObject({
      mode: { type: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin' },
      enabled: false,
      window: { from: null },
      quality: { exclude_spam: true, exclude_quarantined: true },
    });

    const del = await s.post(`/app/routes/${route.id}/delete`, {});
    expect(del.status).toBe(303);
    expect((await t.api('GET', `/v1/routes/${route.id}`, s.key)).status).toBe(404);
    expect((await s.get(`/app/routes/${route.id}`)).status).toBe(404);

    // A destination with no routes left can be deleted from its page.
    const gone = await s.post(`/app/destinations/${destId}/delete`, {});
    expect(gone.status).toBe(303);
    expect((await t.api('GET', `/v1/destinations/${destId}`, s.key)).status).toBe(404);
  });

  it('refuses every action without the CSRF token', async () => {
    const before = (await apiDestinations()).length;
    const r = await s.post('/app/destinations', { type: 'webhook', name: 'x', url: hook.url }, { csrf: false });
    expect(r.status).toBe(403);
    expect((await apiDestinations()).length).toBe(before);
    const { id } = await createWebhook(uniq('Csrf'));
    const off = await s.post(`/app/destinations/${id}/enabled`, { enabled: 'false' }, { csrf: false });
    expect(off.status).toBe(403);
    expect((await t.api('GET', `/v1/destinations/${id}`, s.key)).json.enabled).toBe(true);
  });

  it("answers another organization's destination and route with a 404 page", async () => {
    const other = await t.onboard();
    const d = await t.api('POST', '/v1/destinations', other.key, {
      json: { type: 'webhook', name: 'Theirs', config: { url: hook.url } },
    });
    const f = await t.api('POST', '/v1/forms', other.key, { json: { name: 'Their form' } });
    const r = await t.api('POST', '/v1/routes', other.key, {
      json: { form_id: f.json.id, destination_id: d.json.id },
    });
    expect(r.status).toBe(201);
    const page = await s.get(`/app/destinations/${d.json.id}`);
    expect(page.status).toBe(404);
    expect(page.html).toContain('was not found');
    expect(page.html).not.toContain('Theirs');
    const before = hook.requests.length;
    expect((await s.post(`/app/destinations/${d.json.id}/test`, {})).status).toBe(404);
    expect(hook.requests.length).toBe(before);
    expect((await s.post(`/app/destinations/${d.json.id}/enabled`, { enabled: 'false' })).status).toBe(404);
    expect((await t.api('GET', `/v1/destinations/${d.json.id}`, other.key)).json.enabled).toBe(true);
    expect((await s.get(`/app/routes/${r.json.id}`)).status).toBe(404);
    expect((await s.post(`/app/routes/${r.json.id}/delete`, {})).status).toBe(404);
    // Their form is not a source for this organization's route.
    const mine = await createWebhook(uniq('Mine'));
    const steal = await postRoute('/app/routes', mine.id, { source: `form:${f.json.id}`, mode: 'instant' });
    expect(steal.status).toBe(404);
  });

  it('renders a hostile destination name as text', async () => {
    const name = '<script>alert(1)</script>';
    const r = await s.post('/app/destinations', { type: 'email', name, to: 'x@example.com' });
    expect(r.status).toBe(200);
    const list = await s.get('/app/destinations');
    expect(list.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(list.html).not.toContain('<script>alert(1)');
    const id = (await apiDestinations()).find((d) => d.name === name)?.id;
    const page = await s.get(`/app/destinations/${id}`);
    expect(page.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.html).not.toContain('<script>alert(1)');
  });
});
