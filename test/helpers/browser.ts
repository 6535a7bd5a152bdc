import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import nodeHttp from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { freePort, healthy, http, killServer, loopbackServerEnv, onboardOver, startServer } from './process.js';
import { serverDatabase } from './scratch-db.js';
import { startSmtpSink } from './smtp.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Outside CI a machine without Chromium skips, saying so; in CI a missing browser fails the launch. */
export const noBrowser = !fs.existsSync(CHROMIUM) && !process.env.CI;

/**
 * A real server (`dist/server/main.js`, as `npm start` runs it) on loopback with its own data
 * folder (or a database of its own on TEST_DATABASE_URL's PostgreSQL), an SMTP sink, and Debian's Chromium driven by
 * puppeteer-core. `close()` ends all three.
 */
export async function startBrowserStack(env: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-browser-'));
  const cleanups: Array<() => unknown> = [];
  const smtp = await startSmtpSink();
  cleanups.push(() => smtp.close());
  const db = await serverDatabase();
  cleanups.push(() => db.drop());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server: ChildProcess = startServer({
    ...loopbackServerEnv(port, smtp.url),
    DATA_DIR: path.join(dir, 'data'),
    ...db.env,
    ...env,
  });
  cleanups.push(() => killServer(server));
  const browser: Browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  cleanups.push(() => browser.close());
  await healthy(base);

  /** A manage key for a new address, through the real email-code flow. */
  const onboard = (email: string) => onboardOver(base, smtp, email);

  /**
   * Signs `page` in as `email` (already onboarded) without the sign-in page: a fresh code from the
   * SMTP sink, POST /v1/auth/sign-in, and its session cookie given to the browser.
   */
  async function signInByApi(page: Page, email: string) {
    const before = smtp.messages.length;
    const rc = await http(base, 'POST', '/v1/auth/request-code', undefined, { email });
    if (rc.status !== 200) throw new Error(`request-code: ${rc.status}`);
    const mail = await smtp.waitFor((m) => smtp.messages.indexOf(m) >= before && m.to.includes(email), 10_000);
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
    const res = await fetch(`${base}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, code }),
    });
    if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
    const [pair] = (res.headers.get('set-cookie') ?? '').split(';');
    const eq = pair.indexOf('=');
    await page.setCookie({ name: pair.slice(0, eq), value: pair.slice(eq + 1), url: base });
  }

  return {
    base,
    smtp,
    browser,
    dir,
    onboard,
    signInByApi,
    async close() {
      for (const c of cleanups.reverse()) await c();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The visitor's website: one page on its own loopback origin, `first` until `set` replaces it. */
export async function serveSite(
  first = '<!doctype html><html lang="en"><title>Site</title><body><p>not yet</p></body></html>',
) {
  let html = first;
  const server = nodeHttp.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    origin: `http://127.0.0.1:${port}`,
    set(page: string) {
      html = page;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        // The browser keeps its connections open: close() alone would wait for them.
        server.closeAllConnections();
      }),
  };
}

const axeSource = () => fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core on the page as it is now and returns its serious and critical violations (rule id,
 * impact and the first offending nodes), so a test can `expect(await axeProblems(page)).toEqual([])`.
 * The page's CSP does not apply to evaluate(), which runs in the page through the DevTools protocol.
 */
export async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(axeSource());
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<unknown> } }).axe;
    const r = (await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    })) as {
      violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }>;
    };
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target) }));
  })) as Array<{ id: string; impact: string | null; nodes: unknown[] }>;
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${JSON.stringify(v.nodes)}`);
}
