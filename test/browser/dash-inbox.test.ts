import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

if (noBrowser) console.warn('test/browser/dash-inbox skipped: /usr/bin/chromium is absent');

describe.skipIf(noBrowser)('dashboard: sign in, live inbox, a submission', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let page: Page;
  let key: string;
  let formId: string;
  const email = 'inbox-journey@example.com';

  beforeAll(async () => {
    stack = await startBrowserStack();
    key = await stack.onboard(email);
    const f = await http(stack.base, 'POST', '/v1/forms', key, { name: 'Contact' });
    expect(f.status).toBe(201);
    formId = f.json.id;
    page = await stack.browser.newPage();
  }, 60_000);
  afterAll(() => stack?.close());

  it('signs in through the pages with the emailed code', async () => {
    await page.goto(`${stack.base}/app`);
    expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    expect(await axeProblems(page)).toEqual([]);
    const before = stack.smtp.messages.length;
    await page.type('#email', email);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]:not(.link)')]);
    expect(new URL(page.url()).pathname).toBe('/app/sign-in/code');
    const mail = await stack.smtp.waitFor(
      (m) => stack.smtp.messages.indexOf(m) >= before && m.to.includes(email),
      10_000,
    );
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1] ?? '';
    await page.type('#code', code);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]:not(.link)')]);
    expect(new URL(page.url()).pathname).toBe('/app');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Inbox');
  }, 30_000);

  it('shows a new submission without a reload, then opens it and marks it spam', async () => {
    // The empty inbox: the embed and the test button.
    expect(await page.$eval('main', (m) => m.textContent)).toContain('Send a test submission');
    expect(await axeProblems(page)).toEqual([]);
    await page.evaluate(() => {
      (globalThis as unknown as { marker: string }).marker = 'same page';
    });
    const sent = await http(stack.base, 'POST', `/s/${formId}`, undefined, {
      email: 'ada@example.com',
      message: 'hello from the browser journey',
    });
    expect(sent.status).toBe(200);
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }
        ).document
          .querySelector('#inbox-rows')
          ?.textContent?.includes('hello from the browser journey'),
      { timeout: 20_000 },
    );
    // Still the same document: the row came in without a reload.
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: string }).marker)).toBe('same page');

    await Promise.all([
      page.waitForNavigation(),
      page.click(`#inbox-rows a[href="/app/submissions/${sent.json.submission_id}"]`),
    ]);
    expect(await page.$eval('main', (m) => m.textContent)).toContain('hello from the browser journey');
    expect(await axeProblems(page)).toEqual([]);
    const spamButton = await page.$$('main form button.danger');
    expect(spamButton).toHaveLength(1);
    await Promise.all([page.waitForNavigation(), spamButton[0].click()]);
    expect(await page.$eval('.notice', (n) => n.textContent)).toBe('Marked as spam.');
    const detail = await http(stack.base, 'GET', `/v1/submissions/${sent.json.submission_id}`, key);
    expect(detail.json.status).toBe('spam');
  }, 60_000);
});
