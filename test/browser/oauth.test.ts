import crypto from 'node:crypto';
import nodeHttp from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth, type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';

/** The agent's side: the MCP SDK's OAuthClientProvider, keeping what it is given in memory. */
class AgentProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(readonly redirect: string) {}
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Browser test agent',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The agent's loopback redirect URI: records the query it is sent back with. */
async function callbackServer() {
  const seen: URLSearchParams[] = [];
  const server = nodeHttp.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (u.pathname === '/callback') seen.push(u.searchParams); // (not the browser's /favicon.ico)
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Back in the agent</title><body><h1>Connected</h1></body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describe.skipIf(noBrowser)(
  'connect an agent by URL: the MCP SDK client, OAuth and the consent page in Chromium',
  () => {
    let stack: Awaited<ReturnType<typeof startBrowserStack>>;
    let cb: Awaited<ReturnType<typeof callbackServer>>;
    let page: Page;
    const email = `agent-${crypto.randomUUID().slice(0, 8)}@example.com`;

    beforeAll(async () => {
      stack = await startBrowserStack();
      await stack.onboard(email);
      cb = await callbackServer();
      page = await (await stack.browser.createBrowserContext()).newPage();
    }, 120_000);
    afterAll(async () => {
      await cb?.close();
      await stack?.close();
    });

    /** A fresh SDK client on /mcp with the provider's tokens. */
    async function client(provider: AgentProvider) {
      const transport = new StreamableHTTPClientTransport(new URL(`${stack.base}/mcp`), { authProvider: provider });
      const c = new Client({ name: 'oauth-browser-test', version: '0.0.0' });
      await c.connect(transport);
      return { c, transport };
    }

    /** The email code of the latest sign-in mail to `email` after `before` messages. */
    async function codeAfter(before: number) {
      const mail = await stack.smtp.waitFor(
        (m) => stack.smtp.messages.indexOf(m) >= before && m.to.includes(email),
        10_000,
      );
      return /\b(\d{6})\b/.exec(mail.subject)?.[1] as string;
    }

    it('discovers, registers, signs in by email code, approves, exchanges, calls tools, refreshes and is revoked', async () => {
      const provider = new AgentProvider(cb.url);
      // 1. The bare URL: 401 → resource metadata → AS metadata → registration → the authorization URL.
      const transport = new StreamableHTTPClientTransport(new URL(`${stack.base}/mcp`), { authProvider: provider });
      const first = new Client({ name: 'oauth-browser-test', version: '0.0.0' });
      await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.info?.client_id).toMatch(/^oac_/);
      const at = provider.authorizationUrl as URL;
      expect(`${at.origin}${at.pathname}`).toBe(`${stack.base}/app/oauth/authorize`);
      expect(at.searchParams.get('code_challenge_method')).toBe('S256');
      expect(at.searchParams.get('resource')).toBe(`${stack.base}/mcp`);

      // 2. The person, signed out: the consent URL leads to sign-in by email code, then back to consent.
      await page.goto(at.href);
      expect(new URL(page.url()).pathname).toBe('/app/sign-in');
      const before = stack.smtp.messages.length;
      await page.type('#email', email);
      await Promise.all([page.waitForNavigation(), page.click('form[action="/app/sign-in"] button')]);
      await page.type('#code', await codeAfter(before));
      await Promise.all([page.waitForNavigation(), page.click('form[action="/app/sign-in/code"] button')]);
      expect(new URL(page.url()).pathname).toBe('/app/oauth/authorize');
      expect(await page.$eval('h1', (e) => e.textContent)).toContain('Browser test agent');
      expect(await page.content()).toContain(new URL(cb.url).host);
      expect(await axeProblems(page)).toEqual([]);

      // 3. Approve: the CSP's form-action lets the answer's redirect reach the agent's loopback URI.
      await Promise.all([page.waitForNavigation(), page.click('button[value="approve"]')]);
      expect(page.url().startsWith(cb.url)).toBe(true);
      const back = cb.seen.at(-1) as URLSearchParams;
      expect(back.get('iss')).toBe(stack.base);
      await transport.finishAuth(back.get('code') as string);
      const firstTokens = provider.saved as OAuthTokens;
      expect(firstTokens.access_token).toMatch(/^fso_at_/);
      expect(firstTokens.scope).toBe('manage');

      // 4. tools/list and a tool call over /mcp with the access token.
      const { c } = await client(provider);
      const tools = (await c.listTools()).tools.map((x) => x.name);
      expect(tools).toEqual(expect.arrayContaining(['forms_create', 'forms_list', 'me_get']));
      const made: any = await c.callTool({ name: 'forms_create', arguments: { name: 'From the agent' } });
      expect(made.isError, made.content[0].text).toBeFalsy();
      expect(made.structuredContent.id).toMatch(/^fm_/);
      await c.close();

      // 5. A refresh: new tokens, the old refresh token spent.
      expect(await auth(provider, { serverUrl: `${stack.base}/mcp` })).toBe('AUTHORIZED');
      expect(provider.saved?.access_token).not.toBe(firstTokens.access_token);
      expect(provider.saved?.refresh_token).not.toBe(firstTokens.refresh_token);
      const again = await client(provider);
      const listed: any = await again.c.callTool({ name: 'forms_list', arguments: {} });
      expect(listed.structuredContent.data.map((f: any) => f.name)).toContain('From the agent');
      await again.c.close();

      // 6. The connection on Team › API keys, with its last use; Revoke, and the next call is 401.
      await page.goto(`${stack.base}/app/keys`);
      const row = await page.$eval('#apps-h', (h) => h.parentElement?.textContent ?? '');
      expect(row).toContain('Browser test agent');
      expect(row).toContain(email);
      page.once('dialog', (d) => d.accept());
      await Promise.all([page.waitForNavigation(), page.click('form[action^="/app/oauth/grants/"] button')]);
      expect(await page.$eval('.notice', (e) => e.textContent)).toContain('Connection revoked');
      const after = await fetch(`${stack.base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${provider.saved?.access_token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }, 180_000);
  },
);
