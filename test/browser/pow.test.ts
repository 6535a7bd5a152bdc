import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, serveSite, startBrowserStack } from '../helpers/browser.js';
import { http } from '../helpers/process.js';

/**
 * The proof-of-work challenge in real Chromium at the default difficulty: the hosted page (under
 * its strict CSP) and an embed on another origin solve it with formsvc's own widget and are
 * received; the same form posted as curl posts it (plain HTTP, no solution) is challenge_failed.
 */
describe.skipIf(noBrowser)('the proof-of-work challenge in Chromium', () => {
  const cleanups: (() => unknown)[] = [];
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let key: string;
  let formId: string;

  beforeAll(async () => {
    stack = await startBrowserStack();
    key = await stack.onboard(`pow-browser-${Date.now()}@example.com`);
    const created = await http(stack.base, 'POST', '/v1/forms', key, { name: 'Proof of work' });
    expect(created.status).toBe(201);
    formId = created.json.id;
    const settings = { settings: { challenge: { provider: 'pow' } } };
    expect((await http(stack.base, 'PATCH', `/v1/forms/${formId}`, key, settings)).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await stack?.close();
  });

  /** Watches a page for CSP violations and script errors. */
  function watch(page: Page) {
    const problems: string[] = [];
    page.on('console', (m) => {
      // A failed load is reported with its URL below (the browser's own favicon.ico request is no problem).
      if (/Failed to load resource/.test(m.text())) return;
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
    });
    page.on('pageerror', (e) => problems.push(String(e)));
    return problems;
  }

  /** Fills the default fields and sends; the widget solves first, then the browser posts. */
  async function fillAndSend(page: Page, email: string) {
    await page.type('#f-name', 'Ada');
    await page.type('#f-email', email);
    await page.type('#f-message', 'Hello from a real browser');
    const started = Date.now();
    const [answer] = await Promise.all([
      page.waitForNavigation({ timeout: 60_000 }),
      page.click('button[type="submit"]'),
    ]);
    expect(answer?.status()).toBe(200);
    expect(page.url()).toBe(`${stack.base}/s/${formId}/thanks`);
    return Date.now() - started;
  }

  async function submissionBy(email: string) {
    const list = await http(stack.base, 'GET', `/v1/forms/${formId}/submissions`, key);
    expect(list.status).toBe(200);
    return (
      list.json.data as { status: string; quarantine_reason: string | null; data: Record<string, unknown> }[]
    ).find((s) => s.data.email === email);
  }

  it('the hosted page solves the challenge under its CSP and is received', async () => {
    const page = await stack.browser.newPage();
    const problems = watch(page);
    try {
      const first = await page.goto(`${stack.base}/f/${formId}`, { waitUntil: 'load' });
      expect(first?.status()).toBe(200);
      const csp = first?.headers()['content-security-policy'] ?? '';
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('blob:');
      await page.waitForFunction("customElements.get('altcha-widget') !== undefined");
      expect(await axeProblems(page)).toEqual([]);
      const ms = await fillAndSend(page, 'hosted@example.com');
      console.info(`pow: the hosted page solved and posted in ${ms} ms`);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
    expect(await submissionBy('hosted@example.com')).toMatchObject({ status: 'received', quarantine_reason: null });
    expect(Object.keys((await submissionBy('hosted@example.com'))?.data ?? {})).not.toContain('altcha');
  }, 90_000);

  it('the embed on another origin solves the challenge and is received', async () => {
    const embed = await http(stack.base, 'GET', `/v1/forms/${formId}/embed`, key);
    expect(embed.status).toBe(200);
    expect(embed.json.html).toContain('<altcha-widget');
    const site = await serveSite(
      `<!doctype html><html lang="en"><head><title>Site</title></head><body>${embed.json.html}</body></html>`,
    );
    cleanups.push(site.close);
    const page = await stack.browser.newPage();
    const problems = watch(page);
    try {
      await page.goto(site.url, { waitUntil: 'load' });
      await page.waitForFunction("customElements.get('altcha-widget') !== undefined");
      const ms = await fillAndSend(page, 'embed@example.com');
      console.info(`pow: the embed solved and posted in ${ms} ms`);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
    const s = await submissionBy('embed@example.com');
    expect(s).toMatchObject({ status: 'received', quarantine_reason: null });
  }, 90_000);

  it('the same form posted as curl would (plain HTTP, no solution) is challenge_failed', async () => {
    const res = await fetch(`${stack.base}/s/${formId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ name: 'Bot', email: 'curl@example.com', message: 'no work done' }).toString(),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: false, status: 'quarantined' });
    expect(await submissionBy('curl@example.com')).toMatchObject({
      status: 'quarantined',
      quarantine_reason: 'challenge_failed',
    });
  });
});
