import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

/** Tickets come in fives: a rule the browser cannot check, so only the intake finds the violation. */
const SCHEMA = {
  type: 'object',
  required: ['email', 'tickets'],
  properties: {
    email: { type: 'string', format: 'email' },
    tickets: { type: 'integer', minimum: 5, multipleOf: 5 },
    note: { type: 'string', maxLength: 500 },
    seat: { type: 'string', enum: ['aisle', 'window'] },
  },
};
const UI = {
  email: { order: 1, label: 'Your email' },
  tickets: { order: 2, label: 'Tickets', help: 'Sold in blocks of five' },
  note: { order: 3, widget: 'textarea', placeholder: 'Anything we should know?' },
  seat: { order: 4, widget: 'radio' },
};

describe.skipIf(noBrowser)('the hosted form page in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let key: string;

  beforeAll(async () => {
    stack = await startBrowserStack();
    key = await stack.onboard('hosted-browser@example.com');
  }, 120_000);
  afterAll(() => stack?.close());

  async function fieldValue(page: Page, selector: string) {
    return page.$eval(selector, (el) => (el as unknown as { value: string }).value);
  }

  it('shows a schema violation next to its field, keeps the values, and accepts the fixed post', async () => {
    const created = await http(stack.base, 'POST', '/v1/forms', key, {
      name: 'Concert <tickets>',
      schema_mode: 'enforce',
    });
    expect(created.status).toBe(201);
    const form = created.json as { id: string; hosted_url: string };
    // Listing an origin: the page's own posts still pass, and only that site may frame it.
    const settings = { settings: { allowed_origins: ['https://www.example.com'] } };
    expect((await http(stack.base, 'PATCH', `/v1/forms/${form.id}`, key, settings)).status).toBe(200);
    const publish = await http(stack.base, 'POST', `/v1/forms/${form.id}/schema`, key, { json_schema: SCHEMA, ui: UI });
    expect(publish.status).toBe(201);
    expect(form.hosted_url).toBe(`${stack.base}/f/${form.id}`);

    const page = await stack.browser.newPage();
    const cspReports: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspReports.push(m.text());
    });
    try {
      const first = await page.goto(form.hosted_url, { waitUntil: 'load' });
      expect(first?.status()).toBe(200);
      expect(first?.headers()['content-security-policy']).toContain('frame-ancestors https://www.example.com');
      expect(await page.title()).toBe('Concert <tickets>');
      expect(await page.$eval('h1', (h) => h.textContent)).toBe('Concert <tickets>');
      // The honeypot is in the form but not shown.
      expect(
        await page.$eval('input[name="_gotcha"]', (el) => (el as unknown as { offsetParent: unknown }).offsetParent),
      ).toBeNull();
      expect(await axeProblems(page)).toEqual([]);

      await page.type('#f-email', 'ada@example.com');
      await page.type('#f-tickets', '7');
      await page.type('#f-note', 'Near the <stage> please');
      await page.click('#f-seat-2');
      const [bad] = await Promise.all([
        page.waitForNavigation({ waitUntil: 'load' }),
        page.click('button[type=submit]'),
      ]);
      expect(bad?.status()).toBe(422);
      // The error sits right after the tickets control, which names it as its description.
      const error = await page.$eval('#f-tickets-error', (el) => el.textContent);
      expect(error).toBe('Tickets must be multiple of 5');
      expect(await page.$eval('#f-tickets-error', (el) => el.previousElementSibling?.id)).toBe('f-tickets-help');
      expect(await page.$eval('#f-tickets', (el) => el.getAttribute('aria-describedby'))).toBe(
        'f-tickets-help f-tickets-error',
      );
      expect(await page.$eval('#f-tickets', (el) => el.getAttribute('aria-invalid'))).toBe('true');
      expect(await page.$('#f-email-error')).toBeNull();
      // What the visitor typed is still there.
      expect(await fieldValue(page, '#f-email')).toBe('ada@example.com');
      expect(await fieldValue(page, '#f-tickets')).toBe('7');
      expect(await fieldValue(page, '#f-note')).toBe('Near the <stage> please');
      expect(await page.$eval('#f-seat-2', (el) => (el as unknown as { checked: boolean }).checked)).toBe(true);
      expect(await page.$eval('[role=alert]', (el) => el.textContent)).toContain('Please check your answers');
      expect(await axeProblems(page)).toEqual([]);

      // Fix it and send again: the thanks page.
      await page.$eval('#f-tickets', (el) => {
        (el as unknown as { value: string }).value = '';
      });
      await page.type('#f-tickets', '10');
      const [good] = await Promise.all([
        page.waitForNavigation({ waitUntil: 'load' }),
        page.click('button[type=submit]'),
      ]);
      expect(good?.status()).toBe(200);
      expect(page.url()).toBe(`${stack.base}/s/${form.id}/thanks`);
      expect(await page.$eval('h1', (h) => h.textContent)).toBe('Thank you!');
      expect(cspReports).toEqual([]);
    } finally {
      await page.close();
    }

    const list = await http(stack.base, 'GET', `/v1/forms/${form.id}/submissions`, key);
    const rows = list.json.data as {
      status: string;
      quarantine_reason: string | null;
      data: Record<string, unknown>;
    }[];
    expect(rows.map((r) => [r.status, r.quarantine_reason])).toEqual([
      ['received', null],
      ['quarantined', 'schema_violation'],
    ]);
    expect(rows[0].data).toEqual({
      email: 'ada@example.com',
      tickets: 10,
      note: 'Near the <stage> please',
      seat: 'window',
    });
  }, 120_000);
});
