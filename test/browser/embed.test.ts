import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, noBrowser, serveSite, startBrowserStack } from '../helpers/browser.js';
import { http as call } from '../helpers/process.js';

if (noBrowser)
  console.warn(`test/browser skipped: ${CHROMIUM} is absent (install Debian's chromium; in CI this fails)`);

/** A managed form using every widget llms.txt lists, with the types a browser's strings must become. */
const SCHEMA = {
  type: 'object',
  required: ['name', 'email', 'age', 'agree', 'when', 'plan', 'size'],
  properties: {
    name: { type: 'string' },
    email: { type: 'string', format: 'email' },
    message: { type: 'string', maxLength: 2000 },
    age: { type: 'integer', minimum: 18 },
    qty: { type: 'number' },
    score: { type: 'number' },
    agree: { type: 'boolean' },
    when: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    site: { type: 'string', format: 'uri' },
    phone: { type: 'string' },
    plan: { type: 'string', enum: ['basic', 'pro'] },
    size: { type: 'string', enum: ['s', 'm', 'l'] },
  },
};
const UI = {
  message: { widget: 'textarea' },
  phone: { widget: 'tel' },
  plan: { widget: 'radio', label: 'Plan' },
  size: { widget: 'select' },
};

/** Sets a control's value as its picker would, firing the events the page would see. */
const pick = (page: Page, selector: string, value: string) =>
  page.$eval(
    selector,
    (el, v) => {
      (el as unknown as { value: string }).value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    },
    value,
  );

describe.skipIf(noBrowser)('the embed in a real browser (Chromium)', () => {
  const cleanups: (() => unknown)[] = [];
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let base = '';
  let key = '';
  let browser: Browser;
  let forms = 0;

  const api = (method: string, p: string, json?: unknown) => call(base, method, p, key, json);

  async function managedForm(settings: Record<string, unknown> = {}) {
    const f = await api('POST', '/v1/forms', { name: `Browser form ${++forms}`, schema_mode: 'managed' });
    expect(f.status).toBe(201);
    expect((await api('PATCH', `/v1/forms/${f.json.id}`, { settings })).status).toBe(200);
    const p = await api('POST', `/v1/forms/${f.json.id}/schema`, { json_schema: SCHEMA, ui: UI });
    expect(p.status).toBe(201);
    return f.json.id as string;
  }

  beforeAll(async () => {
    stack = await startBrowserStack();
    ({ base, browser } = stack);
    key = await stack.onboard(`browser-${Date.now()}@example.com`);
    const me = await api('GET', '/v1/me');
    const tz = await api('PATCH', `/v1/organizations/${me.json.organization.id}`, { timezone: 'Europe/Berlin' });
    expect(tz.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await stack?.close();
  });

  it('fills every widget of a managed form’s embed on another origin: received with typed values', async () => {
    const formId = await managedForm();
    const embed = await api('GET', `/v1/forms/${formId}/embed`);
    expect(embed.status).toBe(200);
    const site = await serveSite(`<!doctype html><html lang="en"><body>${embed.json.html}</body></html>`);
    cleanups.push(site.close);
    const page = await browser.newPage();
    await page.goto(site.url);
    await page.type('#f-name', 'Ada');
    await page.type('#f-email', 'ada@example.com');
    await page.type('#f-message', 'Hello\nthere');
    await page.type('#f-age', '25');
    await page.type('#f-qty', '2.5');
    await page.click('#f-agree');
    await pick(page, '#f-when', '2026-11-25T10:30');
    await pick(page, '#f-day', '2026-12-01');
    await page.type('#f-site', 'https://example.com/me');
    await page.type('#f-phone', '+49 30 1234');
    await page.click('#f-plan-2');
    await page.select('#f-size', 'm');
    // score (an optional number) stays empty: the browser posts "".
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    expect(answer?.status()).toBe(200);
    expect(page.url()).toBe(`${base}/s/${formId}/thanks`);
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Thank you!');
    await page.close();

    const list = await api('GET', `/v1/forms/${formId}/submissions`);
    expect(list.json.data).toHaveLength(1);
    const [s] = list.json.data;
    expect(s).toMatchObject({ status: 'received', quarantine_reason: null });
    expect(s.data).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
      message: 'Hello\r\nthere',
      age: 25,
      qty: 2.5,
      agree: true,
      when: '2026-11-25T10:30:00+01:00',
      day: '2026-12-01',
      site: 'https://example.com/me',
      phone: '+49 30 1234',
      plan: 'pro',
      size: 'm',
    });
    expect(s.meta.origin).toBe(new URL(site.url).origin);
  }, 60_000);

  it('fetch with JSON from an origin outside allowed_origins: the POST is sent and stored, its answer unreadable', async () => {
    const formId = await managedForm({ allowed_origins: ['https://good.example'] });
    const site = await serveSite('<!doctype html><html lang="en"><body><p>foreign</p></body></html>');
    cleanups.push(site.close);
    const page = await browser.newPage();
    await page.goto(site.url);
    const outcome = await page.evaluate(async (url) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify({ name: 'Eve', marker: 'foreign-fetch' }),
        });
        return `read ${res.status}`;
      } catch {
        return 'unreadable';
      }
    }, `${base}/s/${formId}`);
    await page.close();
    expect(outcome).toBe('unreadable');
    const list = await api('GET', `/v1/forms/${formId}/submissions`);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0]).toMatchObject({
      status: 'quarantined',
      quarantine_reason: 'origin_rejected',
      data: { name: 'Eve', marker: 'foreign-fetch' },
    });
  }, 60_000);
});
