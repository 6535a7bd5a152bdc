import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

if (noBrowser) console.warn('test/browser/dash-spam skipped: /usr/bin/chromium is absent');

/** Where the screenshots go (look at them after a change to the page). */
const SHOTS = process.env.SPAM_SCREENSHOTS ?? '/tmp';

describe.skipIf(noBrowser)('dashboard: the Spam page and a submission’s spam signals in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let page: Page;
  let key: string;
  let formId: string;
  let submissionId: string;
  const email = `spam-journey-${Date.now()}@example.com`;

  beforeAll(async () => {
    stack = await startBrowserStack();
    key = await stack.onboard(email);
    const f = await http(stack.base, 'POST', '/v1/forms', key, { name: 'Contact' });
    formId = f.json.id;
    // An address without a dot in its domain: a received submission with a signal; marked spam, it teaches.
    const s = await http(stack.base, 'POST', `/s/${formId}`, undefined, {
      email: 'visitor@localhost',
      message: 'Cheap zorblax pills, best zorblax prices',
    });
    expect(s.status).toBe(200);
    submissionId = s.json.submission_id;
    expect((await http(stack.base, 'PATCH', `/v1/submissions/${submissionId}`, key, { status: 'spam' })).status).toBe(
      200,
    );
    page = await stack.browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await stack.signInByApi(page, email);
  }, 60_000);
  afterAll(() => stack?.close());

  it('adds a keyword to the block list, saves it, and sees it', async () => {
    await page.goto(`${stack.base}/app`);
    await Promise.all([page.waitForNavigation(), page.click('nav a[href="/app/spam"]')]);
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Spam');
    expect(await axeProblems(page)).toEqual([]);
    expect(await page.$eval('#spam-learned', (e) => e.textContent)).toBe('1');
    expect(await page.$eval('#marks-h', (h) => h.parentElement?.textContent ?? '')).toContain(submissionId);

    await page.type('#spam-block-keywords', 'buy followers');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/app/spam/lists"] button[type=submit]')]);
    expect(await page.$eval('.notice', (n) => n.textContent)).toContain('Lists saved.');
    expect(await page.$eval('#spam-block-keywords', (e) => (e as unknown as { value: string }).value)).toBe(
      'buy followers',
    );
    const filter = await http(stack.base, 'GET', '/v1/spam', key);
    expect(filter.json.lists.block.keywords).toEqual(['buy followers']);
    await page.screenshot({ path: `${SHOTS}/dash-spam.png`, fullPage: true });

    // A bad range is marked under its field, and the page stays accessible.
    await page.type('#spam-block-ips', '10.0.0.0/33');
    await Promise.all([page.waitForNavigation(), page.click('form[action="/app/spam/lists"] button[type=submit]')]);
    expect(await page.$eval('#spam-block-ips-error', (e) => e.textContent)).toContain('is not an IP address or CIDR');
    expect(await axeProblems(page)).toEqual([]);
  }, 60_000);

  it('shows the submission’s signals and filters the inbox by one', async () => {
    await page.goto(`${stack.base}/app/submissions/${submissionId}`);
    const panel = await page.$eval('#spam-signals-h', (h) => h.parentElement?.textContent ?? '');
    expect(panel).toContain('email_no_dot');
    expect(panel).toContain('the address visitor@localhost has no dot in its domain');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/dash-spam-signals.png`, fullPage: true });

    await Promise.all([page.waitForNavigation(), page.click('a[href="/app?spam_reason=email_no_dot"]')]);
    expect(await page.$eval('#f-spam-reason', (e) => (e as unknown as { value: string }).value)).toBe('email_no_dot');
    expect(await page.$eval('#inbox-rows', (e) => e.textContent)).toContain('zorblax');
    await page.select('#f-spam-reason', 'stale_page');
    await Promise.all([page.waitForNavigation(), page.click('form.filters button[type=submit]')]);
    expect(await page.$eval('#inbox-rows', (e) => e.textContent)).toContain('No submission matches these filters.');
  }, 60_000);
});
