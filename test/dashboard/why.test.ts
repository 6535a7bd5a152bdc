import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { startReceiver, until } from '../helpers/receiver.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;
let bad: Awaited<ReturnType<typeof startReceiver>>;
let subId: string;

beforeAll(async () => {
  t = await startTestApp({ OUTBOUND_ALLOW_PRIVATE: 'true', RETRY_BASE_MS: '5', WEBHOOK_TIMEOUT_MS: '10000' });
  await t.startWorker();
  s = await dashboardSession(t);
  // A receiver whose answer and a destination whose name try to write HTML into the page.
  // Two failures, then a 410 that ends the delivery at once: three attempts.
  bad = await startReceiver((_req, n) => ({ status: n <= 2 ? 500 : 410, body: '<script>alert(1)</script> down' }));
  const form = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Why form' } });
  const dest = await t.api('POST', '/v1/destinations', s.key, {
    json: { type: 'webhook', name: 'Hook <img src=x onerror=alert(2)>', config: { url: bad.url } },
  });
  const route = await t.api('POST', '/v1/routes', s.key, {
    json: { form_id: form.json.id, destination_id: dest.json.id },
  });
  expect(route.status).toBe(201);
  const r = await t.request('POST', `/s/${form.json.id}`, {
    json: { message: '<b>hello</b>' },
    headers: { accept: 'application/json' },
  });
  subId = r.json.submission_id;
  await until(
    'the delivery is dead',
    async () => (await t.api('GET', `/v1/submissions/${subId}/explain`, s.key)).json.outcome === 'failed',
    60_000,
  );
}, 120_000);
afterAll(async () => {
  await bad.close();
  await t.close();
});

describe('the Why panel of a submission page', () => {
  it('shows the summary, the checks, the route and every attempt, escaped, under the strict policy', async () => {
    const r = await s.get(`/app/submissions/${subId}`);
    expect(r.status).toBe(200);
    const why = r.html.slice(r.html.indexOf('<section class="card" id="why">'));
    expect(why.startsWith('<section class="card" id="why"><h2>Why</h2>')).toBe(true);
    const panel = why.slice(0, why.indexOf('</section>'));
    expect(panel).toContain('Not sent to webhook');
    expect(panel).toContain('stopped at once: HTTP 410');
    expect(panel).toContain(`POST /v1/deliveries/`);
    expect(panel).toContain('Intake checks');
    expect(panel).toContain('<td>origin</td>');
    expect(panel).toContain('<td>rate limit</td>');
    // Three attempt rows (# 1..3) with their status codes (a timed-out one on a loaded machine: —).
    expect(panel.match(/<tr><td>\d+<\/td><td><time /g)?.length).toBe(3);
    expect(panel).toContain('<td>500</td>');
    expect(panel).toContain('<td>410</td>');
    expect(panel).toContain('Hook &lt;img src=x onerror=alert(2)&gt;');
    expect(panel).not.toContain('<img src=x');
    expect(panel).not.toContain('<script');
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
  });

  it("another organization's submission is a 404 page", async () => {
    const other = await dashboardSession(t);
    const r = await other.get(`/app/submissions/${subId}`);
    expect(r.status).toBe(404);
  });
});
