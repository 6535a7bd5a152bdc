import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

if (noBrowser) console.warn('test/browser/dash-submitter skipped: /usr/bin/chromium is absent');

/** Where the screenshot goes (look at it after a change to the page). */
const SHOTS = process.env.SUBMITTER_SCREENSHOTS ?? '/tmp';

describe.skipIf(noBrowser)('dashboard: editing the mail to the submitter in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let page: Page;
  let key: string;
  let formId: string;
  const email = `submitter-dash-${Date.now()}@example.com`;

  beforeAll(async () => {
    stack = await startBrowserStack();
    key = await stack.onboard(email);
    formId = (await http(stack.base, 'POST', '/v1/forms', key, { name: 'Newsletter' })).json.id;
    page = await stack.browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await stack.signInByApi(page, email);
  }, 60_000);
  afterAll(() => stack?.close());

  const save = () =>
    Promise.all([page.waitForNavigation(), page.click('form[action$="/settings"] button[type=submit]')]);
  const value = (sel: string) => page.$eval(sel, (e) => (e as unknown as { value: string }).value);

  it('turns the autoresponder on, fixes a refused Reply-To, sees the preview, and the submitter gets the mail', async () => {
    await page.goto(`${stack.base}/app/forms/${formId}`);
    expect(await page.$eval('#submitter-mail', (h) => h.parentElement?.textContent ?? '')).toContain(
      'Autoresponder: off',
    );
    await page.click('#s-ar-enabled');
    await page.type('#s-ar-subject', 'Welcome, {{data.name}}');
    await page.type('#s-ar-body', 'Thanks for signing up.\nSee you soon.');
    await page.type('#s-ar-email', 'email');
    await page.type('#s-ar-replyto', 'not-an-address');
    await page.type('#s-ar-from', 'The Letter');
    await save();
    // Refused (422): the message sits under the field, the typed values are kept.
    expect(await page.$eval('#s-ar-replyto-err', (e) => e.textContent)).toBeTruthy();
    expect(await page.$eval('#s-ar-replyto', (e) => e.getAttribute('aria-invalid'))).toBe('true');
    expect(await value('#s-ar-subject')).toBe('Welcome, {{data.name}}');
    expect(await page.$eval('#s-ar-enabled', (e) => (e as unknown as { checked: boolean }).checked)).toBe(true);
    expect(await axeProblems(page)).toEqual([]);

    await page.$eval('#s-ar-replyto', (e) => {
      (e as unknown as { value: string }).value = '';
    });
    await page.type('#s-ar-replyto', 'letters@people.submitter-test.net');
    await page.click('#s-co-enabled');
    await page.type('#s-co-expires', '48');
    await save();
    expect(await page.$eval('.notice', (n) => n.textContent)).toBe('Settings saved.');
    const form = await http(stack.base, 'GET', `/v1/forms/${formId}`, key);
    expect(form.json.settings.autoresponder).toEqual({
      enabled: true,
      subject: 'Welcome, {{data.name}}',
      body: 'Thanks for signing up.\nSee you soon.',
      email_field: 'email',
      reply_to: 'letters@people.submitter-test.net',
      from_name: 'The Letter',
    });
    expect(form.json.settings.confirm).toEqual({ enabled: true, expires_hours: 48 });
    const preview = await page.$eval('#submitter-mail', (h) => h.parentElement?.textContent ?? '');
    expect(preview).toContain('Autoresponder: preview');
    expect(preview).toContain('Welcome, Ada Lovelace');
    expect(preview).toContain('Reply-To letters@people.submitter-test.net');
    expect(preview).toContain('Double opt-in confirmation: preview');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/dash-submitter.png`, fullPage: true });
    // The two fieldsets and the preview card, at a size that can be read.
    const top = await page.$eval('#s-ar-enabled', (e) => e.closest('fieldset')?.getBoundingClientRect().top ?? 0);
    const bottom = await page.$eval('#submitter-mail', (h) => h.parentElement?.getBoundingClientRect().bottom ?? 0);
    await page.screenshot({
      path: `${SHOTS}/dash-submitter-fields.png`,
      clip: { x: 0, y: top + (await page.evaluate('window.scrollY')), width: 1280, height: bottom - top },
    });

    // Double opt-in off again (box cleared, expiry emptied): the autoresponse goes out at once.
    await page.click('#s-co-enabled');
    await page.$eval('#s-co-expires', (e) => {
      (e as unknown as { value: string }).value = '';
    });
    await save();
    const after = await http(stack.base, 'GET', `/v1/forms/${formId}`, key);
    expect(after.json.settings.confirm).toBeUndefined();
    const to = `reader-${Date.now()}@people.submitter-test.net`;
    const s = await http(stack.base, 'POST', `/s/${formId}`, undefined, { name: 'Grace', email: to });
    expect(s.status).toBe(200);
    const mail = await stack.smtp.waitFor((m) => m.to.includes(to), 15_000);
    expect(mail.subject).toBe('Welcome, Grace');
    expect(mail.text).toContain('Thanks for signing up.');
  });
});
