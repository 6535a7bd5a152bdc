import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { until } from '../helpers/receiver.js';
import { addr, deliveriesOf, mailsTo, makeForm, post, waitDelivery, waitMail } from './helpers.js';

const AUTO = { enabled: true, subject: 'Thanks, {{data.name}}', body: 'We received: {{data.title}}' };

describe('settings.autoresponder', () => {
  let t: TestEnv;
  let key: string;
  let email: string;
  beforeAll(async () => {
    t = await startTestApp({ AUTORESPONDER_PER_ORG_HOUR: '5' });
    ({ key, email } = await t.onboard());
    await t.startWorker();
  });
  afterAll(() => t.close());

  it('mails the submitter as its own delivery: address, Reply-To, From name, escaped HTML, plain text naming the form', async () => {
    const team = addr('team');
    const form = await makeForm(t, key, {
      autoresponder: { ...AUTO, email_field: 'applicant', reply_to: team, from_name: 'The Team' },
    });
    const to = addr('applicant');
    const other = addr('other');
    const j = await post(t, form.id, { name: 'Ada', email: other, applicant: to, title: '<b>Tom & Jerry</b>' });
    expect(j.status).toBe('received');
    const m = await waitMail(t, to);
    expect(m.subject).toBe('Thanks, Ada');
    expect(m.parsed.replyTo?.value[0].address).toBe(team);
    expect(m.parsed.from?.value[0].name).toBe('The Team');
    expect(m.text).toContain('We received: <b>Tom & Jerry</b>');
    expect(m.text).toContain(`"${form.name}"`);
    expect(m.text).toContain('You received this mail because');
    expect(m.html).not.toContain('<b>Tom');
    expect(m.html).toContain('&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;');
    const d = await waitDelivery(t, key, j.submission_id, 'autoresponder', 'sent');
    expect(d.route_id).toBe('autoresponder');
    expect(mailsTo(t, other)).toEqual([]);
  });

  it('takes the address from reply_to_field by default, and lists the fields with include_submission', async () => {
    const form = await makeForm(t, key, {
      reply_to_field: 'contact',
      autoresponder: { ...AUTO, include_submission: true },
    });
    const to = addr('contact');
    await post(t, form.id, { first: addr('first'), contact: to, title: 'Hi', name: 'Bo' });
    const m = await waitMail(t, to);
    expect(m.text).toContain('What you sent:');
    expect(m.text).toContain('title: Hi');
  });

  it('skips (reason limit) a second autoresponse to one address within 24 h, and disposable domains', async () => {
    const form = await makeForm(t, key, { autoresponder: AUTO });
    const to = addr('twice');
    const a = await post(t, form.id, { email: to, name: 'A' });
    const b = await post(t, form.id, { email: to.toUpperCase(), name: 'B' });
    await waitDelivery(t, key, a.submission_id, 'autoresponder', 'sent');
    const second = (await deliveriesOf(t, key, b.submission_id)).find((d) => d.kind === 'autoresponder');
    expect(second).toMatchObject({ status: 'skipped', skip_reason: 'limit' });
    const throwaway = await post(t, form.id, { email: 'someone@mailinator.com', name: 'C' });
    const skipped = (await deliveriesOf(t, key, throwaway.submission_id)).find((d) => d.kind === 'autoresponder');
    expect(skipped).toMatchObject({ status: 'skipped', skip_reason: 'limit' });
    await new Promise((r) => setTimeout(r, 500));
    expect(mailsTo(t, to)).toHaveLength(1);
    expect(mailsTo(t, 'someone@mailinator.com')).toEqual([]);
  });

  it('sends at most AUTORESPONDER_PER_ORG_HOUR per organization per hour', async () => {
    const other = await t.onboard();
    const form = await makeForm(t, other.key, { autoresponder: AUTO });
    const subs = [];
    for (let i = 0; i < 7; i += 1) subs.push(await post(t, form.id, { email: addr(`n${i}`), name: `N${i}` }));
    const kinds = await Promise.all(
      subs.map(async (s) =>
        (await deliveriesOf(t, other.key, s.submission_id)).find((d) => d.kind === 'autoresponder'),
      ),
    );
    expect(kinds.filter((d) => d?.status === 'skipped' && d.skip_reason === 'limit')).toHaveLength(2);
  });

  it('answers only received submissions: not spam, not paused forms, a _test only at the organization’s own address', async () => {
    const form = await makeForm(t, key, { autoresponder: { ...AUTO, subject: 'only-received' } });
    const spamTo = addr('spam');
    const spam = await post(t, form.id, { email: spamTo, _gotcha: 'http://spam.example' });
    expect(spam.status).toBe('spam');
    const stranger = addr('stranger');
    const test = await post(t, form.id, { email: stranger, _test: true });
    await post(t, form.id, { email, _test: true });
    const paused = await makeForm(t, key, { autoresponder: AUTO });
    await t.api('PATCH', `/v1/forms/${paused.id}`, key, { json: { status: 'paused' } });
    const pausedTo = addr('paused');
    await t.request('POST', `/s/${paused.id}`, { json: { email: pausedTo }, headers: { accept: 'application/json' } });
    await waitMail(t, email);
    await new Promise((r) => setTimeout(r, 500));
    expect(mailsTo(t, spamTo)).toEqual([]);
    expect(mailsTo(t, stranger)).toEqual([]);
    expect(mailsTo(t, pausedTo)).toEqual([]);
    expect(await deliveriesOf(t, key, test.submission_id)).toEqual([]);
    expect(await deliveriesOf(t, key, spam.submission_id)).toEqual([]);
  });

  it('refuses bad settings with 422 naming the field', async () => {
    const form = await makeForm(t, key, {});
    const bad = async (autoresponder: unknown) => {
      const r = await t.api('PATCH', `/v1/forms/${form.id}`, key, { json: { settings: { autoresponder } } });
      expect(r.status).toBe(422);
      expect(r.json.error.hint).toBeTruthy();
      return JSON.stringify(r.json.error);
    };
    expect(await bad({ ...AUTO, email_field: 5 })).toContain('email_field');
    expect(await bad({ ...AUTO, subject: 'x'.repeat(201) })).toContain('subject');
    expect(await bad({ enabled: true, body: 'no subject' })).toContain('subject');
    const confirm = await t.api('PATCH', `/v1/forms/${form.id}`, key, {
      json: { settings: { confirm: { enabled: true, expires_hours: 0 } } },
    });
    expect(confirm.status).toBe(422);
    expect(JSON.stringify(confirm.json.error)).toContain('expires_hours');
  });

  it('shows the autoresponse under the submission with its built-in target and address', async () => {
    const form = await makeForm(t, key, { autoresponder: AUTO });
    const j = await post(t, form.id, { email: addr('retry'), name: 'R' });
    const d = await until('an autoresponder delivery', async () =>
      (await deliveriesOf(t, key, j.submission_id)).find((x) => x.kind === 'autoresponder'),
    );
    expect(d.route_id).toBe('autoresponder');
    const one = await t.api('GET', `/v1/deliveries/${d.id}`, key);
    expect(one.json.destination_id).toBe('submitter');
    expect(one.json.payload.to).toMatch(/^retry-/);
  });
});
