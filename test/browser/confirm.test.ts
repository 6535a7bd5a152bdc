import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';

describe.skipIf(noBrowser)('the double opt-in confirmation page in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;

  beforeAll(async () => {
    stack = await startBrowserStack();
    hook = await startReceiver();
    key = await stack.onboard('confirm-browser@example.com');
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await hook?.close();
  });

  it('confirms only on the button, sends the held webhook after, and answers a reused link with a clear 410 page', async () => {
    const form = (await http(stack.base, 'POST', '/v1/forms', key, { name: 'Newsletter <weekly>' })).json as {
      id: string;
    };
    const settings = { settings: { confirm: { enabled: true, email_field: 'email' } } };
    expect((await http(stack.base, 'PATCH', `/v1/forms/${form.id}`, key, settings)).status).toBe(200);
    const dest = await http(stack.base, 'POST', '/v1/destinations', key, {
      type: 'webhook',
      name: 'hook',
      config: { url: hook.url },
    });
    const route = await http(stack.base, 'POST', '/v1/routes', key, { form_id: form.id, destination_id: dest.json.id });
    expect(route.status).toBe(201);
    const to = 'reader@people.submitter-test.net';
    const sent = await http(stack.base, 'POST', `/s/${form.id}`, undefined, { email: to, name: 'Ada' });
    expect(sent.json.status).toBe('quarantined');
    const mail = await stack.smtp.waitFor((m) => m.to.includes(to), 15_000);
    const link = /(http:\/\/127\.0\.0\.1:\d+\/c\/\S+)/.exec(mail.text)?.[1] as string;
    expect(link.startsWith(`${stack.base}/c/`)).toBe(true);

    const page = await stack.browser.newPage();
    try {
      // Opening the link (twice, as a mail scanner might) confirms nothing.
      for (let i = 0; i < 2; i += 1) {
        const res = await page.goto(link, { waitUntil: 'load' });
        expect(res?.status()).toBe(200);
      }
      expect(await page.$eval('h1', (h) => h.textContent)).toBe('Confirm your submission');
      expect(await page.$eval('main', (m) => m.textContent)).toContain('Newsletter <weekly>');
      await new Promise((r) => setTimeout(r, 800));
      const before = await http(stack.base, 'GET', `/v1/submissions/${sent.json.submission_id}`, key);
      expect(before.json.status).toBe('quarantined');
      expect(hook.requests).toEqual([]);

      // The button confirms; the held webhook goes out after.
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('button[type=submit]')]);
      expect(await page.$eval('h1', (h) => h.textContent)).toBe('Thank you, confirmed');
      const after = await http(stack.base, 'GET', `/v1/submissions/${sent.json.submission_id}`, key);
      expect(after.json.status).toBe('received');
      expect(after.json.confirmation.user_agent).toContain('HeadlessChrome');
      const [req] = await until('the released webhook', async () => hook.requests.length > 0 && hook.requests, 15_000);
      expect(req.json.data.email).toBe(to);

      // The link is used up: a clear page, 410.
      const again = await page.goto(link, { waitUntil: 'load' });
      expect(again?.status()).toBe(410);
      expect(await page.$eval('h1', (h) => h.textContent)).toBe('Already confirmed');
    } finally {
      await page.close();
    }
  }, 90_000);
});
