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

describe('the form page’s preview of mail to the submitter', () => {
  it('says each is off, then previews the autoresponse and the confirmation with the sample escaped', async () => {
    const form = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Contact <us>' } });
    const off = await s.get(`/app/forms/${form.json.id}`);
    expect(off.status).toBe(200);
    expect(off.html).toContain('Autoresponder: off');
    const settings = {
      autoresponder: {
        enabled: true,
        subject: 'Thanks, {{data.name}}',
        body: 'You wrote: {{data.message}}',
        from_name: 'Team',
      },
      confirm: { enabled: true },
    };
    expect((await t.api('PATCH', `/v1/forms/${form.json.id}`, s.key, { json: { settings } })).status).toBe(200);
    const on = await s.get(`/app/forms/${form.json.id}`);
    expect(on.html).toContain('Autoresponder: preview');
    expect(on.html).toContain('Thanks, Ada Lovelace');
    expect(on.html).toContain('You wrote: Hello! &lt;b&gt;bold&lt;/b&gt; stays text.');
    expect(on.html).not.toContain('<b>bold</b>');
    expect(on.html).toContain('Double opt-in confirmation: preview');
    expect(on.html).toContain('Please confirm: Contact &lt;us&gt;');
    expect(on.html).toContain('http://127.0.0.1:8787/c/');
  });
});
