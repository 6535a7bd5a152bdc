import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, serveSite, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

const RENDER_REASONS = ['too_fast', 'stale_page', 'bad_render_token'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(noBrowser)('the render token in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let key: string;
  const cleanups: Array<() => unknown> = [];

  beforeAll(async () => {
    stack = await startBrowserStack();
    key = await stack.onboard(`render-${Date.now()}@example.com`);
  }, 120_000);
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await stack?.close();
  });

  async function newForm() {
    const f = await http(stack.base, 'POST', '/v1/forms', key, { name: `Render ${Math.random()}` });
    expect(f.status).toBe(201);
    return f.json.id as string;
  }

  /** Types a message and sends the form the page shows, `waitMs` after the page loaded. */
  async function fillAndSend(page: Page, message: string, waitMs: number) {
    await page.type('#f-email', 'ada@example.com');
    await page.type('#f-message', message);
    const loaded = (await page.evaluate(() => performance.now())) as number;
    const left = waitMs - loaded;
    if (left > 0) await sleep(left);
    const [answer] = await Promise.all([
      page.waitForNavigation({ waitUntil: 'load' }),
      page.click('button[type=submit]'),
    ]);
    return answer;
  }

  /**
   * Waits until `ms` have passed since the server issued the page's render token (the token names
   * that time), not since the page started: on a loaded machine the server's answer, or the fetch
   * that brings an embed's token, can take a good part of a second.
   */
  async function waitSinceIssued(page: Page, ms: number) {
    const token = await page.$eval('input[name="_rendered"]', (el) => (el as unknown as { value: string }).value);
    const issued = Number(token.split('.')[1]);
    expect(Number.isFinite(issued)).toBe(true);
    await sleep(Math.max(0, issued + ms - Date.now()));
  }

  async function onlySubmission(formId: string) {
    const list = await http(stack.base, 'GET', `/v1/forms/${formId}/submissions`, key);
    expect(list.json.data).toHaveLength(1);
    return list.json.data[0] as { status: string; data: Record<string, unknown>; spam: { reasons: string[] } };
  }

  it('the hosted page posted after 2 s is received without too_fast; posted 0.5 s after render it reads too_fast', async () => {
    const calm = await newForm();
    const page = await stack.browser.newPage();
    try {
      await page.goto(`${stack.base}/f/${calm}`, { waitUntil: 'load' });
      await waitSinceIssued(page, 2_300);
      const answer = await fillAndSend(page, 'Hello, I took my time writing this.', 0);
      expect(answer?.status()).toBe(200);
      expect(page.url()).toBe(`${stack.base}/s/${calm}/thanks`);
      const s = await onlySubmission(calm);
      expect(s.status).toBe('received');
      expect(s.spam.reasons.filter((r) => RENDER_REASONS.includes(r))).toEqual([]);
      expect(s.data).toEqual({ name: '', email: 'ada@example.com', message: 'Hello, I took my time writing this.' });

      const hasty = await newForm();
      await page.goto(`${stack.base}/f/${hasty}`, { waitUntil: 'load' });
      await fillAndSend(page, 'Quick', 500);
      const fast = await onlySubmission(hasty);
      expect(fast.spam.reasons).toContain('too_fast');
      expect(fast.data).not.toHaveProperty('_rendered');
    } finally {
      await page.close();
    }
  }, 60_000);

  it('the html embed on another origin fills _rendered from GET /s/{formId}/render', async () => {
    const formId = await newForm();
    const embed = await http(stack.base, 'GET', `/v1/forms/${formId}/embed`, key);
    expect(embed.status).toBe(200);
    const site = await serveSite(`<!doctype html><html lang="en"><body>${embed.json.html}</body></html>`);
    cleanups.push(site.close);
    const page = await stack.browser.newPage();
    try {
      await page.goto(site.url, { waitUntil: 'load' });
      // The page's script fills the hidden input once the token is in (a string: it runs in the page).
      await page.waitForFunction(`document.querySelector('input[name="_rendered"]').value !== ''`, {
        timeout: 10_000,
      });
      const token = await page.$eval('input[name="_rendered"]', (el) => (el as unknown as { value: string }).value);
      expect(token).toMatch(/^[A-Za-z0-9_-]{22}\.\d{13}$/);
      await waitSinceIssued(page, 2_300);
      await fillAndSend(page, 'Hello from the owner’s own site, written slowly.', 0);
      const s = await onlySubmission(formId);
      expect(s.spam.reasons.filter((r) => RENDER_REASONS.includes(r))).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
