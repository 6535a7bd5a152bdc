import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { startReceiver, until } from '../helpers/receiver.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let bad: Awaited<ReturnType<typeof startReceiver>>;
let good: Awaited<ReturnType<typeof startReceiver>>;
/** Form A → failing destination, form B → working destination. */
let ids: { formA: string; formB: string; failing: string; working: string };

beforeAll(async () => {
  t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE: 'true', RETRY_BASE_MS: '5', WEBHOOK_TIMEOUT_MS: '2000' });
  await t.startWorker();
  s = await dashboardSession(t);
  bad = await startReceiver(() => ({ status: 500, body: '<script>alert(1)</script> down' }));
  good = await startReceiver();
  const form = async (name: string) => (await t.api('POST', '/v1/forms', s.key, { json: { name } })).json.id as string;
  const dest = async (name: string, url: string) =>
    (await t.api('POST', '/v1/destinations', s.key, { json: { type: 'webhook', name, config: { url } } })).json
      .id as string;
  ids = {
    formA: await form('Form A'),
    formB: await form('Form B'),
    failing: await dest('Failing hook', bad.url),
    working: await dest('Working hook', good.url),
  };
  for (const [f, d] of [
    [ids.formA, ids.failing],
    [ids.formB, ids.working],
  ]) {
    const r = await t.api('POST', '/v1/routes', s.key, { json: { form_id: f, destination_id: d } });
    expect(r.status).toBe(201);
  }
});
afterAll(async () => {
  await bad.close();
  await good.close();
  await t.close();
});

async function submit(formId: string) {
  const r = await t.request('POST', `/s/${formId}`, {
    json: { email: `${crypto.randomUUID().slice(0, 6)}@example.com` },
    headers: { accept: 'application/json' },
  });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

async function deliveryOf(submissionId: string) {
  const r = await t.api('GET', `/v1/deliveries?submission_id=${submissionId}`, s.key);
  return r.json.data[0] as { id: string; status: string; attempts: number } | undefined;
}

const waitFor = (submissionId: string, status: string) =>
  until(
    `${submissionId} ${status}`,
    async () => {
      const d = await deliveryOf(submissionId);
      return d?.status === status ? d : null;
    },
    30_000,
  );

const rowIds = (html: string) => [...html.matchAll(/<tr id="delivery-([^"]+)"/g)].map((m) => m[1]);

describe('the delivery log', () => {
  let dead: { id: string };
  let sent: { id: string };
  let sub: string;

  beforeAll(async () => {
    sub = await submit(ids.formA);
    const ok = await submit(ids.formB);
    dead = await waitFor(sub, 'dead');
    sent = await waitFor(ok, 'sent');
  }, 40_000);

  it('lists deliveries with status, attempts and the last response, escaped', async () => {
    const r = await s.get('/app/deliveries');
    expect(r.status).toBe(200);
    expect(rowIds(r.html)).toEqual(expect.arrayContaining([dead.id, sent.id]));
    expect(r.html).toContain('badge-dead');
    expect(r.html).toContain('HTTP 500');
    expect(r.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; down');
    expect(r.html).not.toContain('<script>alert(1)');
    expect(r.html).toContain('Failing hook');
    expect(r.html).toContain(`/app/submissions/${sub}`);
    expect(r.html).toContain('<td>10</td>'); // a webhook's attempts before dead
    expect(r.html).toContain(`action="/app/deliveries/${dead.id}/retry"`);
  });

  it('filters by status, destination and form, and paginates with the cursor', async () => {
    const byStatus = rowIds((await s.get('/app/deliveries?status=dead')).html);
    expect(byStatus).toContain(dead.id);
    expect(byStatus).not.toContain(sent.id);
    const byDest = rowIds((await s.get(`/app/deliveries?destination_id=${ids.working}`)).html);
    expect(byDest).toEqual([sent.id]);
    const byForm = await s.get(`/app/deliveries?form_id=${ids.formA}&status=`);
    expect(rowIds(byForm.html)).toEqual([dead.id]);
    expect(byForm.html).toMatch(new RegExp(`<option value="${ids.formA}" selected`));
    const none = await s.get(`/app/deliveries?form_id=${ids.formB}&status=dead`);
    expect(rowIds(none.html)).toEqual([]);
    expect(none.html).toContain('No deliveries match');

    const first = await s.get('/app/deliveries?limit=1');
    expect(rowIds(first.html)).toHaveLength(1);
    const next = /href="(\/app\/deliveries\?[^"]*cursor=[^"]+)"/.exec(first.html)?.[1].replaceAll('&amp;', '&');
    expect(next).toBeTruthy();
    const second = await s.get(next as string);
    expect(rowIds(second.html)).toHaveLength(1);
    expect(rowIds(second.html)[0]).not.toBe(rowIds(first.html)[0]);
    expect((await s.get('/app/deliveries?status=bogus')).status).toBe(422);
  });

  it('retries one delivery and returns to the filtered log', async () => {
    bad.set(() => ({ status: 200, body: 'ok now' }));
    const back = `/app/deliveries?destination_id=${ids.failing}`;
    const r = await s.post(`/app/deliveries/${dead.id}/retry`, { back });
    expect(r.status).toBe(303);
    expect(r.location).toMatch(new RegExp(`^/app/deliveries\\?destination_id=${ids.failing}&notice=`));
    await waitFor(sub, 'sent');
    const page = await s.get(back);
    expect(page.html).toContain('badge-sent');
    expect(page.html).toContain('ok now');
    // A return address off the log is not followed.
    const again = await s.post(`/app/deliveries/${dead.id}/retry`, { back: 'https://evil.example/' });
    expect(again.location).toMatch(/^\/app\/deliveries\?notice=/);
    await waitFor(sub, 'sent');
  });

  it('retries all that match after a confirmation, through the bulk replay', async () => {
    bad.set(() => ({ status: 500, body: 'down again' }));
    const subs = [await submit(ids.formA), await submit(ids.formA)];
    for (const x of subs) await waitFor(x, 'dead');

    const log = await s.get(`/app/deliveries?destination_id=${ids.failing}&status=dead`);
    expect(log.html).toContain(`href="/app/deliveries/retry?status=dead&amp;destination_id=${ids.failing}"`);
    const confirm = await s.get(`/app/deliveries/retry?status=dead&destination_id=${ids.failing}`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('Failing hook');
    expect(confirm.html).toContain('Yes, retry them all');

    bad.set(() => ({ status: 200, body: 'ok' }));
    const r = await s.post('/app/deliveries/retry', { status: 'dead', destination_id: ids.failing });
    expect(r.status).toBe(303);
    expect(decodeURIComponent(r.location ?? '')).toContain('Queued 2 of 2 matching deliveries again.');
    for (const x of subs) await waitFor(x, 'sent');
  }, 40_000);

  it('asks for a narrower filter before a bulk retry, and refuses one of another status', async () => {
    const log = await s.get('/app/deliveries');
    expect(log.html).toContain('first choose a destination or a form');
    expect(log.html).not.toContain('href="/app/deliveries/retry');
    const bare = await s.post('/app/deliveries/retry', {});
    expect(bare.status).toBe(422);
    const sentOnes = await s.get(`/app/deliveries/retry?status=sent&destination_id=${ids.working}`);
    expect(sentOnes.status).toBe(422);
    expect(sentOnes.html).toContain('Only dead or failed');
  });

  it('refuses a retry without the CSRF token', async () => {
    const before = await t.api('GET', `/v1/deliveries/${sent.id}`, s.key);
    const r = await s.post(`/app/deliveries/${sent.id}/retry`, {}, { csrf: false });
    expect(r.status).toBe(403);
    const bulk = await s.post('/app/deliveries/retry', { destination_id: ids.working }, { csrf: false });
    expect(bulk.status).toBe(403);
    const after = await t.api('GET', `/v1/deliveries/${sent.id}`, s.key);
    expect(after.json.attempts).toBe(before.json.attempts);
    expect(after.json.status).toBe('sent');
  });

  it("answers another organization's delivery and destination with 404", async () => {
    const other = await t.onboard();
    const d = await t.api('POST', '/v1/destinations', other.key, {
      json: { type: 'webhook', name: 'Theirs', config: { url: good.url } },
    });
    const other2 = await dashboardSession(t);
    expect((await other2.post(`/app/deliveries/${dead.id}/retry`, {})).status).toBe(404);
    expect((await s.post('/app/deliveries/retry', { destination_id: d.json.id })).status).toBe(404);
    const theirs = await other2.get('/app/deliveries');
    expect(rowIds(theirs.html)).toEqual([]);
    expect(theirs.html).toContain('No deliveries yet');
  });
});
