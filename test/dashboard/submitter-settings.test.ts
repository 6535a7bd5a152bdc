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

const api = (method: string, path: string, json?: unknown) => t.api(method, path, s.key, { json });

async function createForm(name: string) {
  const r = await api('POST', '/v1/forms', { name });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

/** The settings form as a browser posts it: the other settings as they are, then the submitter's fields. */
const base = { name: 'Contact', tags: '', schema_mode: 'observe', allowed_origins: '', honeypot_field: '' };
const emptySubmitter = {
  ar_subject: '',
  ar_body: '',
  ar_email_field: '',
  ar_reply_to: '',
  ar_from_name: '',
  co_subject: '',
  co_body: '',
  co_email_field: '',
  co_expires: '',
};
const save = (id: string, fields: Record<string, string>, opts?: { csrf: boolean }) =>
  s.post(`/app/forms/${id}/settings`, { ...base, ...emptySubmitter, ...fields }, opts);

describe('the settings form’s mail to the submitter', () => {
  it('saves the autoresponder and double opt-in through PATCH’s service, shows them again and previews them', async () => {
    const id = await createForm('Contact');
    const r = await save(id, {
      ar_enabled: 'on',
      ar_subject: 'Thanks, {{data.name}}',
      ar_body: 'We got it.\r\nTalk soon <3',
      ar_email_field: 'mail',
      ar_reply_to: 'team@example.com',
      ar_from_name: 'The <Team>',
      ar_include: 'on',
      co_enabled: 'on',
      co_subject: 'Confirm, {{data.name}}',
      co_body: 'Press the button.',
      co_email_field: 'mail',
      co_expires: '48',
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/app/forms/${id}?notice=Settings%20saved.`);
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json.settings.autoresponder).toEqual({
      enabled: true,
      subject: 'Thanks, {{data.name}}',
      body: 'We got it.\nTalk soon <3',
      email_field: 'mail',
      reply_to: 'team@example.com',
      from_name: 'The <Team>',
      include_submission: true,
    });
    expect(got.json.settings.confirm).toEqual({
      enabled: true,
      subject: 'Confirm, {{data.name}}',
      body: 'Press the button.',
      email_field: 'mail',
      expires_hours: 48,
    });

    const page = await s.get(`/app/forms/${id}`);
    expect(page.html).toMatch(/id="s-ar-enabled"[^>]*checked/);
    expect(page.html).toMatch(/id="s-ar-include"[^>]*checked/);
    expect(page.html).toMatch(/id="s-co-enabled"[^>]*checked/);
    expect(page.html).toContain('value="Thanks, {{data.name}}"');
    expect(page.html).toContain('value="The &lt;Team&gt;"');
    expect(page.html).toMatch(/<textarea id="s-ar-body"[^>]*>We got it.\nTalk soon &lt;3<\/textarea>/);
    expect(page.html).toContain('value="48"');
    // The preview reflects what was saved (the sample submission's name filled in, all escaped).
    expect(page.html).toContain('Autoresponder: preview');
    expect(page.html).toContain('Thanks, Ada Lovelace');
    expect(page.html).toContain('From The &lt;Team&gt;');
    expect(page.html).toContain('Confirm, Ada Lovelace');
    expect(page.html).not.toContain('<Team>');
  });

  it('clears optional fields when emptied, and removes each setting when its box and fields are empty', async () => {
    const id = await createForm('Clearing');
    await save(id, {
      ar_enabled: 'on',
      ar_subject: 'Hi',
      ar_body: 'Thanks',
      ar_reply_to: 'team@example.com',
      ar_from_name: 'Team',
      ar_include: 'on',
      co_enabled: 'on',
      co_subject: 'Confirm',
      co_expires: '24',
    });
    // Optional fields emptied, boxes cleared but words kept: stored off, without the emptied keys.
    expect((await save(id, { ar_subject: 'Hi', ar_body: 'Thanks', co_body: 'Kept' })).status).toBe(303);
    const off = await api('GET', `/v1/forms/${id}`);
    expect(off.json.settings.autoresponder).toEqual({ enabled: false, subject: 'Hi', body: 'Thanks' });
    expect(off.json.settings.confirm).toEqual({ enabled: false, body: 'Kept' });
    const page = await s.get(`/app/forms/${id}`);
    expect(page.html).not.toMatch(/id="s-ar-enabled"[^>]*checked/);
    expect(page.html).toContain('Autoresponder: off');

    // Nothing left: both keys removed.
    expect((await save(id, {})).status).toBe(303);
    const gone = await api('GET', `/v1/forms/${id}`);
    expect(gone.json.settings).not.toHaveProperty('autoresponder');
    expect(gone.json.settings).not.toHaveProperty('confirm');
  });

  it('keeps the stored settings when a post has none of their fields', async () => {
    const id = await createForm('Untouched');
    const settings = { autoresponder: { enabled: true, subject: 'S', body: 'B' }, confirm: { enabled: true } };
    expect((await api('PATCH', `/v1/forms/${id}`, { settings })).status).toBe(200);
    const r = await s.post(`/app/forms/${id}/settings`, { ...base, name: 'Untouched 2' });
    expect(r.status).toBe(303);
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json.name).toBe('Untouched 2');
    expect(got.json.settings).toMatchObject(settings);
  });

  it('shows the API’s refusal next to each field with the values kept, and stores nothing', async () => {
    const id = await createForm('Refused');
    const r = await save(id, {
      ar_enabled: 'on',
      ar_subject: '',
      ar_body: 'Body <kept>',
      ar_reply_to: 'not an address',
      co_enabled: 'on',
      co_expires: '0',
    });
    expect(r.status).toBe(422);
    for (const field of ['s-ar-subject', 's-ar-replyto', 's-co-expires']) {
      expect(r.html).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
      expect(r.html).toMatch(new RegExp(`<div id="${field}-err"><p class="field-error">[^<]+</p>`));
    }
    expect(r.html).not.toContain('id="s-ar-body-err"');
    expect(r.html).toContain('value="not an address"');
    expect(r.html).toContain('Body &lt;kept&gt;</textarea>');
    expect(r.html).toMatch(/id="s-ar-enabled"[^>]*checked/);
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json.settings).toEqual({});
  });

  it('refuses a post without the page token, and another organization’s form with a 404', async () => {
    const id = await createForm('Guarded');
    const fields = { ar_enabled: 'on', ar_subject: 'S', ar_body: 'B' };
    expect((await save(id, fields, { csrf: false })).status).toBe(403);
    expect((await other.post(`/app/forms/${id}/settings`, { ...base, ...fields })).status).toBe(404);
    const got = await api('GET', `/v1/forms/${id}`);
    expect(got.json.settings).toEqual({});
  });
});
