import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';

describe.skipIf(noBrowser)('dashboard: destinations, routes and deliveries in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  let page: Page;
  let key: string;
  const email = `dest-${Date.now()}@example.com`;

  beforeAll(async () => {
    // Small retry steps: a failing delivery goes through its 10 attempts and is dead within seconds.
    stack = await startBrowserStack({ RETRY_BASE_MS: '5', WEBHOOK_TIMEOUT_MS: '2000' });
    hook = await startReceiver(() => ({ status: 500, body: 'receiver is down' }));
    key = await stack.onboard(email);
    page = await stack.browser.newPage();
    await stack.signInByApi(page, email);
  }, 60_000);

  afterAll(async () => {
    await hook?.close();
    await stack?.close();
  });

  /** Reloads the page until `selector` is on it. */
  async function reloadUntil(selector: string, ms = 30_000) {
    await until(
      selector,
      async () => {
        await page.reload({ waitUntil: 'domcontentloaded' });
        return (await page.$(selector)) !== null;
      },
      ms,
    );
  }

  it('creates a webhook and a route, sees the failing delivery dead, fixes the receiver and retries it', async () => {
    const form = await http(stack.base, 'POST', '/v1/forms', key, { name: 'Contact' });
    expect(form.status).toBe(201);
    const formId = form.json.id as string;

    await page.goto(`${stack.base}/app/destinations`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Destinations');
    expect(await axeProblems(page)).toEqual([]);

    await Promise.all([page.waitForNavigation(), page.click('a[href="/app/destinations/new"]')]);
    await page.type('#webhook-name', 'Orders hook');
    await page.type('#webhook-url', hook.url);
    await Promise.all([page.waitForNavigation(), page.click('#new-webhook button[type=submit]')]);
    // The destination page, with the generated signing secret shown this once.
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Orders hook');
    expect(await page.$eval('#signing-secret', (c) => c.textContent)).toMatch(/^whsec_/);
    expect(await axeProblems(page)).toEqual([]);

    await Promise.all([page.waitForNavigation(), page.click('a[href^="/app/routes/new"]')]);
    expect(await axeProblems(page)).toEqual([]);
    await page.select('#route-source', `form:${formId}`);
    await Promise.all([page.waitForNavigation(), page.click('form[action="/app/routes"] button[type=submit]')]);
    expect(await page.$eval('.notice', (n) => n.textContent)).toContain('Route created');
    expect(await page.$$eval('table a', (as) => as.map((a) => a.textContent))).toContain('Form: Contact');
    expect(await page.$('#signing-secret')).toBeNull();
    expect(await axeProblems(page)).toEqual([]);

    const sub = await http(stack.base, 'POST', `/s/${formId}`, undefined, { email: 'ada@example.com' });
    expect(sub.status).toBe(200);

    await page.goto(`${stack.base}/app/deliveries`, { waitUntil: 'domcontentloaded' });
    await reloadUntil('.badge-dead');
    expect(await page.$eval('tbody', (b) => b.textContent)).toContain('HTTP 500');
    expect(await axeProblems(page)).toEqual([]);

    const before = hook.requests.length;
    hook.set(() => ({ status: 200, body: 'thanks' }));
    await Promise.all([page.waitForNavigation(), page.click('button[aria-label^="Retry delivery"]')]);
    expect(await page.$eval('.notice', (n) => n.textContent)).toContain('queued again');
    await reloadUntil('.badge-sent');
    expect(await page.$eval('tbody', (b) => b.textContent)).toContain('HTTP 200');
    expect(hook.requests.length).toBeGreaterThan(before);
  }, 120_000);
});
