import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { addr, deliveriesOf, mailsTo, makeForm, post, waitDelivery, waitMail } from './helpers.js';

const AUTO = { enabled: true, subject: 'Thanks, {{data.name}}', body: 'We got it.' };

/**
 * Mail to a submitter refused by the receiving server (550 at RCPT) until it is dead, then replayed
 * (one by id, or in bulk) once the server accepts it: the built-in target is never disabled, so it
 * is sent. Its death raises `delivery.dead` like a route delivery's.
 */
describe('a dead mail to the submitter', () => {
  let t: TestEnv;
  let key: string;
  const refused = new Set<string>();
  const receiver = fileReceivers();
  let hook: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    t = await startTestApp();
    ({ key } = await t.onboard());
    hook = await receiver();
    const created = await t.api('POST', '/v1/webhooks', key, { json: { url: hook.url, events: ['delivery.dead'] } });
    expect(created.status).toBe(201);
    t.smtp.refuse((to) => refused.has(to));
    await t.startWorker();
  });
  afterAll(() => t.close());

  /** A submission whose autoresponse the receiving server refuses until it is dead. */
  async function deadAutoresponse(formId: string) {
    const email = addr('refused');
    refused.add(email);
    const sub = await post(t, formId, { name: 'Ada', email });
    const dead = await waitDelivery(t, key, sub.submission_id, 'autoresponder', 'dead');
    const full = (await t.api('GET', `/v1/deliveries/${dead.id}`, key)).json;
    expect(full).toMatchObject({ destination_id: 'submitter', route_id: 'autoresponder', attempts: 8 });
    expect(full.last_error).toMatch(/mailbox unavailable|550/);
    expect(full.last_error).toContain('gave up after 8 attempts');
    expect(mailsTo(t, email)).toHaveLength(0);
    return { email, id: dead.id as string, submissionId: sub.submission_id };
  }

  const deadEvents = async () =>
    (await t.api('GET', '/v1/events?type=delivery.dead&limit=200', key)).json.data as {
      subject: Record<string, unknown>;
      data: Record<string, unknown>;
    }[];

  it('raises delivery.dead naming the submitter target, fanned out to system webhooks once an hour', async () => {
    const form = await makeForm(t, key, { autoresponder: AUTO });
    const first = await deadAutoresponse(form.id);
    const ev = await until('the delivery.dead event', async () =>
      (await deadEvents()).find((e) => e.subject.delivery_id === first.id),
    );
    expect(ev.subject).toEqual({
      delivery_id: first.id,
      submission_id: first.submissionId,
      route_id: 'autoresponder',
      destination_id: 'submitter',
      form_id: form.id,
    });
    expect(ev.data).toMatchObject({ target: 'submitter', kind: 'autoresponder', attempts: 8, throttled: false });
    expect(String(ev.data.error)).toMatch(/mailbox unavailable|550/);
    const sent = await hook.waitFor((r) => r.some((q) => q.json?.subject?.delivery_id === first.id));
    expect(sent.find((q) => q.json?.subject?.delivery_id === first.id)?.json.type).toBe('delivery.dead');

    // A second death within the hour is in the log, but not sent to system webhooks again.
    const second = await deadAutoresponse(form.id);
    const again = await until('the second delivery.dead event', async () =>
      (await deadEvents()).find((e) => e.subject.delivery_id === second.id),
    );
    expect(again.data).toMatchObject({ target: 'submitter', throttled: true });
    await new Promise((r) => setTimeout(r, 500));
    expect(hook.requests.some((q) => q.json?.subject?.delivery_id === second.id)).toBe(false);
  });

  it('replays one dead autoresponse by id: due at once (the built-in target is never disabled), then sent', async () => {
    const form = await makeForm(t, key, { autoresponder: AUTO });
    const dead = await deadAutoresponse(form.id);
    refused.delete(dead.email);
    const r = await t.api('POST', `/v1/deliveries/${dead.id}/retry`, key);
    expect(r.status).toBe(202);
    expect(r.json.next_attempt_at).not.toBeNull();
    const mail = await waitMail(t, dead.email);
    expect(mail.subject).toBe('Thanks, Ada');
    await waitDelivery(t, key, dead.submissionId, 'autoresponder', 'sent');
  });

  it('replays dead autoresponses in bulk, by form or by the submitter target, and sends them', async () => {
    const form = await makeForm(t, key, { autoresponder: AUTO });
    const a = await deadAutoresponse(form.id);
    const b = await deadAutoresponse(form.id);
    refused.delete(a.email);
    const byForm = await t.api('POST', '/v1/deliveries/retry', key, { json: { form_id: form.id } });
    expect(byForm.status).toBe(200);
    expect(byForm.json).toEqual({ matched: 2, queued: 2 });
    await waitMail(t, a.email);
    await waitDelivery(t, key, a.submissionId, 'autoresponder', 'sent');
    // b is still refused: it dies again, and a replay naming the built-in target sends it.
    await waitDelivery(t, key, b.submissionId, 'autoresponder', 'dead');
    refused.delete(b.email);
    const byTarget = await t.api('POST', '/v1/deliveries/retry', key, {
      json: { destination_id: 'submitter', route_id: 'autoresponder', form_id: form.id },
    });
    expect(byTarget.status).toBe(200);
    expect(byTarget.json).toEqual({ matched: 1, queued: 1 });
    await waitMail(t, b.email);
    await waitDelivery(t, key, b.submissionId, 'autoresponder', 'sent');
    // Replayed, not planned again: still one autoresponse under the submission.
    const all = await deliveriesOf(t, key, b.submissionId);
    expect(all.filter((d) => d.kind === 'autoresponder')).toHaveLength(1);
  });

  it('still answers 404 for a route or destination id that is not the organization’s', async () => {
    for (const json of [{ destination_id: 'ds_nope' }, { route_id: 'rt_nope' }]) {
      const r = await t.api('POST', '/v1/deliveries/retry', key, { json });
      expect(r.status).toBe(404);
    }
  });
});
