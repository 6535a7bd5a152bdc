import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, serveSite, startBrowserStack } from '../helpers/browser.js';
import { http as call } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';

const run = promisify(execFile);

if (noBrowser) console.warn('test/browser/journey skipped: /usr/bin/chromium is absent');

/**
 * With JOURNEY_SCREENSHOTS=<folder> (docs/screenshots for the README and docs/dashboard.md) the journey also saves
 * screenshots of the inbox, a submission and the form settings at 1280×800 into that folder.
 */
const SHOTS = process.env.JOURNEY_SCREENSHOTS ? path.resolve(process.env.JOURNEY_SCREENSHOTS) : null;

type El = { textContent: string | null; value: string };
type Doc = { querySelector(s: string): El | null };

describe.skipIf(noBrowser)('the dashboard journey of issue 21, end to end in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let site: Awaited<ReturnType<typeof serveSite>>;
  let hook: Awaited<ReturnType<typeof startReceiver>>;
  let page: Page;
  let visitor: Page;
  let key: string;
  let formId = '';
  let fileSubmissionId = '';
  let hookSubmissionId = '';
  const email = `journey-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const member = `teammate-${crypto.randomUUID().slice(0, 8)}@example.com`;
  // A small binary file with every byte value, so a text or encoding mix-up on the way shows.
  const fileBytes = Buffer.from(Array.from({ length: 1024 }, (_, i) => i % 256));
  let filePath = '';

  beforeAll(async () => {
    // Small retry steps: a failing webhook goes through its 10 attempts and is dead within seconds.
    stack = await startBrowserStack({ RETRY_BASE_MS: '5', WEBHOOK_TIMEOUT_MS: '2000' });
    site = await serveSite();
    hook = await startReceiver(() => ({ status: 500, body: 'receiver is down' }));
    // The account exists (its API key sets up the schema later); the browser signs in by the pages.
    key = await stack.onboard(email);
    filePath = path.join(stack.dir, 'quote.bin');
    fs.writeFileSync(filePath, fileBytes);
    page = await stack.browser.newPage();
    visitor = await stack.browser.createBrowserContext().then((c) => c.newPage());
    if (SHOTS) await page.setViewport({ width: 1280, height: 800 });
  }, 120_000);

  afterAll(async () => {
    await site?.close();
    await hook?.close();
    await stack?.close();
  });

  /** Clicks and waits for the page the click leads to. */
  async function go(selector: string, on: Page = page) {
    await Promise.all([on.waitForNavigation(), on.click(selector)]);
  }
  const h1 = (on: Page = page) => on.$eval('main h1, h1', (h) => h.textContent);
  const textOf = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');

  /** Fills the embed on the visitor's site, attaches the file, and sends it: the thanks page. */
  async function postThroughEmbed(name: string, message: string) {
    await visitor.goto(site.url);
    await visitor.type('#f-name', name);
    await visitor.type('#f-email', `${name.split(' ')[0].toLowerCase()}@example.com`);
    await visitor.type('#f-message', message);
    const input = await visitor.$('#f-attachment');
    await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(filePath);
    const [answer] = await Promise.all([visitor.waitForNavigation(), visitor.click('button[type=submit]')]);
    expect(answer?.status()).toBe(200);
    expect(visitor.url()).toBe(`${stack.base}/s/${formId}/thanks`);
  }

  /** The id of the newest submission whose message is `message`, read through the API. */
  async function submissionWith(message: string) {
    const list = await call(stack.base, 'GET', `/v1/forms/${formId}/submissions`, key);
    const s = (list.json.data as { id: string; data: { message?: string } }[]).find((r) => r.data.message === message);
    return s?.id ?? '';
  }

  it('signs in on /app/sign-in with the code from the mail and lands on the inbox', async () => {
    await page.goto(`${stack.base}/app/forms`);
    expect(new URL(page.url()).pathname).toBe('/app/sign-in');
    expect(await axeProblems(page)).toEqual([]);
    const before = stack.smtp.messages.length;
    await page.type('#email', email);
    await go('button[type=submit]:not(.link)');
    expect(new URL(page.url()).pathname).toBe('/app/sign-in/code');
    const mail = await stack.smtp.waitFor(
      (m) => stack.smtp.messages.indexOf(m) >= before && m.to.includes(email),
      10_000,
    );
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1] ?? '';
    expect(code).toMatch(/^\d{6}$/);
    await page.type('#code', code);
    await go('button[type=submit]:not(.link)');
    // Back where the signed-out visit was going.
    expect(new URL(page.url()).pathname).toBe('/app/forms');
    expect(await h1()).toBe('Forms');
  }, 60_000);

  it('creates a form on /app/forms by typing, and lets the site’s origin post to it', async () => {
    expect(await axeProblems(page)).toEqual([]);
    await page.type('#nf-name', 'Quote requests');
    await page.type('#nf-tags', 'web, sales');
    await go('form[method="post"][action="/app/forms"] button[type=submit]');
    formId = /\/app\/forms\/(fm_[^/?]+)/.exec(page.url())?.[1] ?? '';
    expect(formId).toBeTruthy();
    expect(await textOf('.notice')).toContain('Form created');
    expect(await axeProblems(page)).toEqual([]);

    await page.type('#s-origins', site.origin);
    await go('form[action$="/settings"] button[type=submit]');
    expect(await textOf('.notice')).toBe('Settings saved.');
    const form = await call(stack.base, 'GET', `/v1/forms/${formId}`, key);
    expect(form.json.settings.allowed_origins).toEqual([site.origin]);

    // The HTML snippet as the form page shows it (the one its Copy button copies), plus a file field.
    const snippet = await textOf('#embed-html');
    expect(snippet).toContain(`action="${stack.base}/s/${formId}"`);
    const withFile = snippet
      .replace('method="POST">', 'method="POST" enctype="multipart/form-data">')
      .replace(
        '  <button type="submit">',
        '  <label for="f-attachment">Attachment</label>\n  <input id="f-attachment" type="file" name="attachment">\n  <button type="submit">',
      );
    expect(withFile).toContain('enctype="multipart/form-data"');
    expect(withFile).toContain('type="file"');
    site.set(`<!doctype html><html lang="en"><head><title>Acme</title></head><body>${withFile}</body></html>`);
  }, 60_000);

  it('posts through the embed on another origin with a file; the open inbox shows it without a reload', async () => {
    await page.goto(`${stack.base}/app`);
    expect(await h1()).toBe('Inbox');
    await page.evaluate(() => {
      (globalThis as unknown as { marker: string }).marker = 'same page';
    });

    await postThroughEmbed('Ada Lovelace', 'Quote for 40 seats, file attached');
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: Doc }).document
          .querySelector('#inbox-rows')
          ?.textContent?.includes('Quote for 40 seats') ?? false,
      { timeout: 20_000 },
    );
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: string }).marker)).toBe('same page');
    expect(await axeProblems(page)).toEqual([]);

    fileSubmissionId = await submissionWith('Quote for 40 seats, file attached');
    const s = await call(stack.base, 'GET', `/v1/submissions/${fileSubmissionId}`, key);
    expect(s.json).toMatchObject({ status: 'received', meta: { origin: site.origin } });
  }, 60_000);

  it('opens the submission and downloads its file, byte for byte', async () => {
    await go(`#inbox-rows a[href="/app/submissions/${fileSubmissionId}"]`);
    const main = await textOf('main');
    expect(main).toContain('Quote for 40 seats, file attached');
    expect(main).toContain('Download quote.bin');
    expect(await axeProblems(page)).toEqual([]);

    const href = await page.$eval('a[download]', (a) => a.getAttribute('href') ?? '');
    expect(href).toMatch(new RegExp(`^/v1/submissions/${fileSubmissionId}/attachments/`));
    const got = await page.evaluate(async (url) => {
      const res = await fetch(url);
      return { status: res.status, bytes: Array.from(new Uint8Array(await res.arrayBuffer())) };
    }, href);
    expect(got.status).toBe(200);
    expect(Buffer.from(got.bytes).equals(fileBytes)).toBe(true);
  }, 60_000);

  it('routes the form to a failing webhook: the delivery is dead; fixed and retried, it is sent', async () => {
    await page.goto(`${stack.base}/app/destinations/new`);
    expect(await axeProblems(page)).toEqual([]);
    await page.type('#webhook-name', 'CRM hook');
    await page.type('#webhook-url', hook.url);
    await go('#new-webhook button[type=submit]');
    expect(await h1()).toBe('CRM hook');
    expect(await textOf('#signing-secret')).toMatch(/^whsec_/);
    expect(await axeProblems(page)).toEqual([]);

    await go('a[href^="/app/routes/new"]');
    expect(await axeProblems(page)).toEqual([]);
    await page.select('#route-source', `form:${formId}`);
    await go('form[action="/app/routes"] button[type=submit]');
    expect(await textOf('.notice')).toContain('Route created');

    await postThroughEmbed('Grace Hopper', 'Please call me back about pricing');
    hookSubmissionId = await submissionWith('Please call me back about pricing');
    expect(hookSubmissionId).toBeTruthy();
    await hook.waitFor((r) => r.some((q) => JSON.stringify(q.json ?? '').includes(hookSubmissionId)), 20_000);

    await page.goto(`${stack.base}/app/deliveries`);
    const reloadUntil = (selector: string) =>
      until(
        selector,
        async () => {
          await page.reload({ waitUntil: 'domcontentloaded' });
          return (await page.$(selector)) !== null;
        },
        60_000,
      );
    await reloadUntil('.badge-dead');
    expect(await textOf('tbody')).toContain('HTTP 500');
    expect(await axeProblems(page)).toEqual([]);

    const before = hook.requests.length;
    hook.set(() => ({ status: 200, body: 'thanks' }));
    await go('button[aria-label^="Retry delivery"]');
    expect(await textOf('.notice')).toContain('queued again');
    await reloadUntil('.badge-sent');
    expect(await textOf('tbody')).toContain('HTTP 200');
    expect(hook.requests.length).toBeGreaterThan(before);
    expect(hook.requests.at(-1)?.raw.toString()).toContain(hookSubmissionId);
  }, 120_000);

  it('invites a member on /app/team', async () => {
    await page.goto(`${stack.base}/app/team`);
    expect(await axeProblems(page)).toEqual([]);
    const before = stack.smtp.messages.length;
    await page.type('#inv-email', member);
    await page.select('#inv-role', 'member');
    await go('form[action="/app/team/invitations"] button');
    expect(await textOf('.notice')).toContain(`Invitation sent to ${member}`);
    expect(await textOf('main')).toContain(member);
    const mail = await stack.smtp.waitFor(
      (m) => stack.smtp.messages.indexOf(m) >= before && m.to.includes(member),
      10_000,
    );
    expect(mail.text).toMatch(new RegExp(`${stack.base}/app/invitations/\\S+`));
    expect(await axeProblems(page)).toEqual([]);
  }, 60_000);

  it('mints a key on /app/keys and the CLI works with it', async () => {
    await page.goto(`${stack.base}/app/keys`);
    expect(await axeProblems(page)).toEqual([]);
    await page.type('#key-name', 'ci');
    await go('form[action="/app/keys"] button[type=submit]');
    const minted = await textOf('#new-api-key');
    expect(minted).toMatch(/^svc_live_/);

    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORMSVC_')));
    const { stdout } = await run(process.execPath, ['bin/formsvc.js', 'whoami', '--json'], {
      env: {
        ...clean,
        FORMSVC_BASE_URL: stack.base,
        FORMSVC_API_KEY: minted,
        FORMSVC_CONFIG: path.join(stack.dir, 'cli-config.json'),
        NO_COLOR: '1',
      },
      timeout: 60_000,
    });
    const who = JSON.parse(stdout);
    expect(who.key.prefix).toBe(minted.slice(0, who.key.prefix.length));
    expect(who.key.scopes).toEqual(['read']);
  }, 120_000);

  it('fills the hosted page /f/{formId} with a schema violation and sees the error next to the field', async () => {
    const mode = await call(stack.base, 'PATCH', `/v1/forms/${formId}`, key, { schema_mode: 'enforce' });
    expect(mode.status).toBe(200);
    const published = await call(stack.base, 'POST', `/v1/forms/${formId}/schema`, key, {
      json_schema: {
        type: 'object',
        required: ['email', 'seats'],
        properties: {
          email: { type: 'string', format: 'email' },
          // A rule the browser cannot check: only the intake finds the violation.
          seats: { type: 'integer', minimum: 10, multipleOf: 10 },
        },
      },
      ui: { email: { order: 1 }, seats: { order: 2, label: 'Seats', help: 'In blocks of ten' } },
    });
    expect(published.status).toBe(201);

    await visitor.goto(`${stack.base}/f/${formId}`);
    expect(await h1(visitor)).toBe('Quote requests');
    expect(await axeProblems(visitor)).toEqual([]);
    await visitor.type('#f-email', 'linus@example.com');
    await visitor.type('#f-seats', '15');
    const [bad] = await Promise.all([visitor.waitForNavigation(), visitor.click('button[type=submit]')]);
    expect(bad?.status()).toBe(422);
    expect(await visitor.$eval('#f-seats-error', (e) => e.textContent)).toContain('multiple of 10');
    expect(await visitor.$eval('#f-seats', (e) => e.getAttribute('aria-invalid'))).toBe('true');
    expect(await visitor.$('#f-email-error')).toBeNull();
    expect(await visitor.$eval('#f-seats', (e) => (e as unknown as El).value)).toBe('15');
    expect(await axeProblems(visitor)).toEqual([]);
  }, 60_000);

  it.runIf(SHOTS)(
    'saves the README screenshots',
    async () => {
      const dir = SHOTS as string;
      fs.mkdirSync(dir, { recursive: true });
      await page.goto(`${stack.base}/app`);
      await page.screenshot({ path: path.join(dir, 'inbox.png') });
      await page.goto(`${stack.base}/app/submissions/${hookSubmissionId}`);
      await page.screenshot({ path: path.join(dir, 'submission.png') });
      await page.goto(`${stack.base}/app/forms/${formId}`);
      // From the form's name down: its tabs, then the settings the picture is about.
      await page.$eval('main h1', (h) => h.scrollIntoView());
      await page.screenshot({ path: path.join(dir, 'form-settings.png') });
    },
    60_000,
  );
});
