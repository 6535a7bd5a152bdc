import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';

/**
 * Issue 33 part 4 end to end: an agent's key points a form at a new webhook, the owner is mailed a
 * link (the in-process SMTP server), opens it in the signed-in dashboard (real Chromium), approves,
 * and the delivery that waited reaches the receiver.
 */
describe.skipIf(noBrowser)('approval of a new destination in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  let page: Page;
  let key: string;
  const email = `approver-${Date.now()}@example.com`;

  beforeAll(async () => {
    stack = await startBrowserStack();
    hook = await startReceiver();
    key = await stack.onboard(email);
    page = await stack.browser.newPage();
    await stack.signInByApi(page, email);
  }, 90_000);

  afterAll(async () => {
    await hook?.close();
    await stack?.close();
  });

  it('key creates → mail with link → owner approves in the dashboard → the waiting delivery is sent', async () => {
    const me = await http(stack.base, 'GET', '/v1/organizations', key);
    const orgId = me.json.data[0].id as string;
    const set = await http(stack.base, 'PATCH', `/v1/organizations/${orgId}`, key, {
      settings: { approve_destinations: 'keys' },
    });
    expect(set.status).toBe(200);

    const form = await http(stack.base, 'POST', '/v1/forms', key, { name: 'Leads' });
    const before = stack.smtp.messages.length;
    const dest = await http(stack.base, 'POST', '/v1/destinations', key, {
      type: 'webhook',
      name: 'Agent <b>hook</b>',
      config: { url: `${hook.url}/agent` },
    });
    expect(dest.status).toBe(201);
    expect(dest.json.approval).toBe('pending');
    const route = await http(stack.base, 'POST', '/v1/routes', key, {
      form_id: form.json.id,
      destination_id: dest.json.id,
    });
    expect(route.status).toBe(201);
    const sub = await http(stack.base, 'POST', `/s/${form.json.id}`, undefined, { name: 'Grace', note: 'waits' });
    expect(sub.status).toBe(200);
    const sid = sub.json.submission_id as string;

    const mail = await stack.smtp.waitFor(
      (m) => stack.smtp.messages.indexOf(m) >= before && m.to.includes(email),
      15_000,
    );
    const link = /(http:\/\/\S+\/app\/approvals\/\S+)/.exec(mail.text)?.[1];
    expect(link).toBe(`${stack.base}/app/approvals/${dest.json.id}`);
    // The name is escaped in the HTML part, never markup.
    expect(mail.html).toContain('Agent &lt;b&gt;hook&lt;/b&gt;');

    // Every page shows the banner while something waits.
    await page.goto(`${stack.base}/app`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('#approval-banner', (b) => b.textContent)).toContain('1 new destination waits');

    await page.goto(link as string, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Agent <b>hook</b>');
    expect(await page.$eval('#approval-host', (d) => d.textContent)).toBe('127.0.0.1');
    expect(await page.$eval('#approval-addresses', (d) => d.textContent)).toContain('127.0.0.1 [loopback]');
    expect(await page.$eval('#approval-asked-by', (d) => d.textContent)).toContain('API key');
    expect(await page.$eval('#approval-feeds', (d) => d.textContent)).toContain('Leads');
    expect(await page.$eval('#approval-sample', (d) => d.textContent)).toContain(sid);
    expect(await page.$eval('#approval-waiting', (d) => d.textContent)).toBe('1');
    expect(await axeProblems(page)).toEqual([]);
    expect(hook.requests).toHaveLength(0);

    await Promise.all([page.waitForNavigation(), page.click('#approve')]);
    expect(page.url()).toContain(`/app/destinations/${dest.json.id}`);
    expect(await page.$('#approval-banner')).toBeNull();

    await until('the delivery that waited reaches the receiver', async () =>
      hook.requests.some((r) => r.url === '/hook/agent' && r.json?.submission?.id === sid),
    );
    await until('the delivery is sent', async () => {
      const d = await http(stack.base, 'GET', `/v1/deliveries?submission_id=${sid}`, key);
      return d.json.data[0]?.status === 'sent';
    });
    const after = await http(stack.base, 'GET', `/v1/destinations/${dest.json.id}`, key);
    expect(after.json.approval).toBe('approved');
  }, 120_000);
});
