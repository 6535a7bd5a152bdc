import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries, submissions } from '../../server/db/schema.js';
import { confirmKey, confirmToken } from '../../server/domain/confirm-token.js';
import { releaseHeld } from '../../server/worker/quota-release.js';
import { deleteUnconfirmed } from '../../server/worker/unconfirmed-expiry.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver, until } from '../helpers/receiver.js';
import { addr, deliveriesOf, mailsTo, makeForm, post, waitMail } from './helpers.js';

const HTML = { accept: 'text/html', 'user-agent': 'confirm-test/1.0' };

describe('settings.confirm (double opt-in)', () => {
  let t: TestEnv;
  let key: string;
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    // The tests run the housekeeping jobs themselves: the worker's own run (every 300 ms by default
    // in tests) would race them for the rows they count (CI once counted 0 for a due row: a run of
    // the worker had deleted or held it).
    t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE: 'true', HOUSEKEEPING_MS: '3600000' });
    ({ key } = await t.onboard());
    hook = await startReceiver();
    await t.startWorker();
  });
  afterAll(async () => {
    await t.close();
    await hook.close();
  });

  /** A double opt-in form routed to the receiver, and one submission to it. */
  async function pending(settings: Record<string, unknown> = {}) {
    const form = await makeForm(t, key, { confirm: { enabled: true, email_field: 'email' }, ...settings });
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'hook', config: { url: hook.url } },
    });
    const route = await t.api('POST', '/v1/routes', key, { json: { form_id: form.id, destination_id: dest.json.id } });
    const to = addr('doi');
    const j = await post(t, form.id, { email: to, name: 'Ada' });
    const mail = await waitMail(t, to);
    const link = /http:\/\/127\.0\.0\.1:8787(\/c\/[^\s]+)/.exec(mail.text)?.[1];
    if (!link) throw new Error(`no /c/ link in ${mail.text}`);
    return { form, routeId: route.json.id as string, to, j, mail, path: link };
  }

  const sentFor = (submissionId: string) => hook.requests.filter((r) => r.json?.submission?.id === submissionId);

  it('stores quarantined/pending_confirmation, holds the route delivery, mails a link; GET changes nothing', async () => {
    const p = await pending();
    expect(p.j.status).toBe('quarantined');
    const s = await t.api('GET', `/v1/submissions/${p.j.submission_id}`, key);
    expect(s.json.quarantine_reason).toBe('pending_confirmation');
    const ds = await deliveriesOf(t, key, p.j.submission_id);
    expect(ds.find((d) => d.route_id === p.routeId)?.status).toBe('held');
    expect(ds.find((d) => d.kind === 'confirmation')).toBeTruthy();
    expect(p.mail.text).toContain(`"${p.form.name}"`);
    for (let i = 0; i < 2; i += 1) {
      const page = await t.request('GET', p.path, { headers: HTML });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(page.text).toContain('<button');
    }
    // The housekeeping release of over-quota deliveries leaves these alone.
    await releaseHeld(t.deps);
    await new Promise((r) => setTimeout(r, 400));
    expect((await deliveriesOf(t, key, p.j.submission_id)).find((d) => d.route_id === p.routeId)?.status).toBe('held');
    expect(sentFor(p.j.submission_id)).toEqual([]);
  });

  it('the POST confirms: received, confirmation recorded, event appended, held webhook sent; a second press is 410', async () => {
    const p = await pending({
      autoresponder: { enabled: true, subject: 'Welcome aboard', body: 'Hello {{data.name}}' },
    });
    expect(mailsTo(t, p.to).filter((m) => m.subject === 'Welcome aboard')).toEqual([]);
    const r = await t.request('POST', p.path, { headers: { ...HTML, 'sec-fetch-site': 'same-origin' } });
    expect(r.status).toBe(200);
    expect(r.text).toContain('confirmed');
    const s = await t.api('GET', `/v1/submissions/${p.j.submission_id}`, key);
    expect(s.json.status).toBe('received');
    expect(s.json.quarantine_reason).toBeNull();
    expect(s.json.confirmation).toMatchObject({ user_agent: 'confirm-test/1.0' });
    expect(typeof s.json.confirmation.ip).toBe('string');
    const [req] = await until(
      'the released webhook',
      async () => sentFor(p.j.submission_id)[0] && sentFor(p.j.submission_id),
    );
    expect(req.json.data.email).toBe(p.to);
    expect(req.json.submission.status).toBe('received');
    // The autoresponder of a double opt-in form goes out after the confirmation.
    await until('the autoresponse', async () => mailsTo(t, p.to).find((m) => m.subject === 'Welcome aboard'));
    const ev = await t.api('GET', '/v1/events?type=submission.confirmed', key);
    expect(
      ev.json.data.some((e: { subject: { submission_id: string } }) => e.subject.submission_id === p.j.submission_id),
    ).toBe(true);
    const again = await t.request('POST', p.path, { headers: { ...HTML, 'sec-fetch-site': 'same-origin' } });
    expect(again.status).toBe(410);
    expect(again.text).toContain('Already confirmed');
    expect((await t.request('GET', p.path, { headers: HTML })).status).toBe(410);
  });

  it('refuses a cross-site POST, a forged token (404) and an expired one (410)', async () => {
    const p = await pending();
    const cross = await t.request('POST', p.path, { headers: { ...HTML, 'sec-fetch-site': 'cross-site' } });
    expect(cross.status).toBe(403);
    const foreign = await t.request('POST', p.path, { headers: { ...HTML, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    const token = p.path.slice(3);
    const forged = `${token.slice(0, -2)}${token.endsWith('A') ? 'BB' : 'AA'}`;
    expect(
      (await t.request('POST', `/c/${forged}`, { headers: { ...HTML, 'sec-fetch-site': 'same-origin' } })).status,
    ).toBe(404);
    const key2 = await confirmKey(t.deps.database);
    const expired = confirmToken(key2, p.j.submission_id, new Date(Date.now() - 1000));
    const page = await t.request('GET', `/c/${expired}`, { headers: HTML });
    expect(page.status).toBe(410);
    expect(page.text).toContain('expired');
    const s = await t.api('GET', `/v1/submissions/${p.j.submission_id}`, key);
    expect(s.json.status).toBe('quarantined');
  });

  it('deletes unconfirmed submissions a day after their link expired, with their held deliveries', async () => {
    const p = await pending({ confirm: { enabled: true, expires_hours: 1 } });
    const id = p.j.submission_id;
    await t.deps.database.db
      .update(submissions)
      .set({ receivedAt: new Date(Date.now() - 20 * 3_600_000) })
      .where(eq(submissions.id, id));
    expect(await deleteUnconfirmed(t.deps)).toBe(0);
    await t.deps.database.db
      .update(submissions)
      .set({ receivedAt: new Date(Date.now() - 26 * 3_600_000) })
      .where(eq(submissions.id, id));
    // A row another transaction holds (the worker's search indexer writes a new submission's search
    // text) is skipped until the next run, as the job's next run would: try again until it goes.
    let deleted = 0;
    await until('the unconfirmed submission deleted', async () => {
      deleted += await deleteUnconfirmed(t.deps);
      return deleted > 0;
    });
    expect(deleted).toBe(1);
    expect(await t.deps.database.db.select().from(deliveries).where(eq(deliveries.submissionId, id))).toEqual([]);
    expect((await t.api('GET', `/v1/submissions/${id}`, key)).status).toBe(404);
    expect((await t.request('GET', p.path, { headers: HTML })).status).toBe(410);
  });
});
