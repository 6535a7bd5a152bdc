import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

describe.skipIf(noBrowser)('dashboard forms in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let page: Page;
  let key: string;

  beforeAll(async () => {
    stack = await startBrowserStack();
    const email = 'forms-browser@example.com';
    key = await stack.onboard(email);
    const context = stack.browser.defaultBrowserContext();
    await context.overridePermissions(stack.base, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
    page = await stack.browser.newPage();
    await stack.signInByApi(page, email);
  });
  afterAll(() => stack?.close());

  /** Clicks a submit button and waits for the page the POST leads to. */
  async function submitWith(selector: string) {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
  }

  it('creates a form, changes a setting, publishes a schema after fixing an error, and copies a snippet', async () => {
    await page.goto(`${stack.base}/app/forms`);
    expect(await page.$eval('main h1', (h) => h.textContent)).toBe('Forms');
    expect(await axeProblems(page)).toEqual([]);

    // Create, by typing.
    await page.type('#nf-name', 'Browser contact');
    await page.type('#nf-tags', 'web, contact');
    await page.select('#nf-mode', 'enforce');
    await submitWith('form[method="post"][action="/app/forms"] button[type=submit]');
    const id = /\/app\/forms\/(fm_[^/?]+)/.exec(page.url())?.[1] as string;
    expect(id).toBeTruthy();
    expect(await page.$eval('.notice', (n) => n.textContent)).toContain('Form created');
    expect(await axeProblems(page)).toEqual([]);

    // A setting: a redirect URL, first mistyped (the error sits next to the field), then right.
    await page.type('#s-redirect', 'example.com/thanks');
    await submitWith('form[action$="/settings"] button[type=submit]');
    expect(await page.$eval('#s-redirect-err', (e) => e.textContent)).toBeTruthy();
    expect(await page.$eval('#s-redirect', (e) => (e as unknown as { value: string }).value)).toBe(
      'example.com/thanks',
    );
    expect(await axeProblems(page)).toEqual([]);
    await page.$eval('#s-redirect', (e) => {
      (e as unknown as { value: string }).value = '';
    });
    await page.type('#s-redirect', 'https://example.com/thanks');
    await submitWith('form[action$="/settings"] button[type=submit]');
    expect(await page.$eval('.notice', (n) => n.textContent)).toBe('Settings saved.');
    const form = await http(stack.base, 'GET', `/v1/forms/${id}`, key);
    expect(form.json.settings.redirect_url).toBe('https://example.com/thanks');
    expect(form.json.tags).toEqual(['web', 'contact']);

    // Copy the HTML snippet: the clipboard gets it, or (without a clipboard) the snippet is selected.
    const snippet = await page.$eval('#embed-html', (e) => e.textContent ?? '');
    expect(snippet).toContain(`/s/${id}`);
    await page.click('button[data-copy="embed-html"]');
    // Page-side code as text: it runs in the browser, where document and navigator exist.
    const button = `document.querySelector('button[data-copy="embed-html"]')`;
    await page.waitForFunction(`${button}.textContent === 'Copied' || window.getSelection().toString().length > 0`, {
      timeout: 5000,
    });
    const copied = await page.evaluate(
      `${button}.textContent === 'Copied' ? navigator.clipboard.readText() : window.getSelection().toString()`,
    );
    expect(copied).toBe(snippet);

    // The schema page, through its tab.
    await Promise.all([page.waitForNavigation(), page.click('nav[aria-label="Form pages"] a[href$="/schema"]')]);
    expect(await axeProblems(page)).toEqual([]);
    await page.$eval('#ed-schema', (e) => {
      (e as unknown as { value: string }).value = '';
    });
    await page.type('#ed-schema', '{"type": "object",\n"properties": {"email": {"type": "string"}},}');
    await page.type('#ed-changelog', 'Email only');
    await submitWith('form[action$="/schema"] button[type=submit]');
    const err = await page.$eval('#ed-schema-err', (e) => e.textContent ?? '');
    expect(err).toContain('Invalid JSON at line 2, column');
    expect(await page.$eval('#ed-schema', (e) => (e as unknown as { value: string }).value)).toContain(
      '"properties": {"email"',
    );
    expect(await page.$eval('#ed-changelog', (e) => (e as unknown as { value: string }).value)).toBe('Email only');
    expect(await axeProblems(page)).toEqual([]);

    await page.$eval('#ed-schema', (e) => {
      (e as unknown as { value: string }).value = '';
    });
    await page.type('#ed-schema', '{"type": "object", "properties": {"email": {"type": "string"}}}');
    await submitWith('form[action$="/schema"] button[type=submit]');
    expect(await page.$eval('.notice', (n) => n.textContent)).toBe('Version 1 published.');
    expect(await page.$eval('#versions ~ .table-wrap', (e) => e.textContent)).toContain('Email only');
    const schema = await http(stack.base, 'GET', `/v1/forms/${id}/schema`, key);
    expect(schema.json).toMatchObject({ version: 1, changelog: 'Email only' });
    expect(await axeProblems(page)).toEqual([]);

    // Back on the list, the new form is there with its mode and version.
    await page.goto(`${stack.base}/app/forms`);
    const row = await page.$eval(`a[href="/app/forms/${id}"]`, (a) => a.closest('tr')?.textContent ?? '');
    expect(row).toContain('Browser contact');
    expect(row).toContain('enforce · v1');
    expect(await axeProblems(page)).toEqual([]);
  });

  it('draws the 30-day chart without a CSP report, accessible, with its numbers one click away', async () => {
    const made = await http(stack.base, 'POST', '/v1/forms', key, { name: 'Charted' });
    const id = made.json.id as string;
    for (let i = 0; i < 3; i++) {
      const r = await http(stack.base, 'POST', `/s/${id}`, undefined, { email: `c${i}@example.com`, message: 'hi' });
      expect(r.status).toBe(200);
    }
    const reports: string[] = [];
    const onConsole = (m: { text(): string }) => {
      if (/Content Security Policy/i.test(m.text())) reports.push(m.text());
    };
    page.on('console', onConsole);
    try {
      for (const path of ['/app/forms', `/app/forms/${id}`]) {
        await page.goto(`${stack.base}${path}`);
        const box = await page.$eval('svg.chart-svg', (svg) => {
          const r = svg.getBoundingClientRect();
          return { width: r.width, height: r.height };
        });
        expect(box.width).toBeGreaterThan(300);
        expect(box.height).toBeGreaterThan(50);
        // today's bar is drawn in the received colour and has height
        const bar = await page.$eval('svg.chart-svg rect.chart-received', (r) => ({
          fill: (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(r).fill,
          height: r.getBoundingClientRect().height,
        }));
        expect(bar.fill).toBe('rgb(59, 76, 202)');
        expect(bar.height).toBeGreaterThan(0);
        // the table is folded away until its summary is clicked
        const hidden = `!document.querySelector('.chart details').open`;
        expect(await page.evaluate(hidden)).toBe(true);
        await page.click('.chart summary');
        expect(await page.evaluate(hidden)).toBe(false);
        expect(
          await page.evaluate(`document.querySelector('.chart-table').getBoundingClientRect().height`),
        ).toBeGreaterThan(100);
        const today = new Date().toISOString().slice(0, 10);
        const row = await page.$eval('.chart-table tbody tr', (tr) => tr.textContent ?? '');
        expect(row.startsWith(today)).toBe(true);
        expect(row).toContain('3');
        expect(await axeProblems(page)).toEqual([]);
      }
      expect(reports).toEqual([]);
    } finally {
      page.off('console', onConsole);
    }
  });
});
