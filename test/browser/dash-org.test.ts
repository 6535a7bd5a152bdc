import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeProblems, noBrowser, startBrowserStack } from '../helpers/browser.js';

const run = promisify(execFile);

describe.skipIf(noBrowser)('dashboard: team, invitations, keys, streams and events in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startBrowserStack>>;
  let ownerCtx: BrowserContext;
  let inviteeCtx: BrowserContext;
  let owner: Page;
  let ownerKey: string;
  const ownerEmail = `owner-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const inviteeEmail = `invitee-${crypto.randomUUID().slice(0, 8)}@example.com`;

  beforeAll(async () => {
    stack = await startBrowserStack();
    ownerKey = await stack.onboard(ownerEmail);
    await stack.onboard(inviteeEmail);
    ownerCtx = await stack.browser.createBrowserContext();
    inviteeCtx = await stack.browser.createBrowserContext();
    owner = await ownerCtx.newPage();
    await stack.signInByApi(owner, ownerEmail);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('invites a member, who accepts from the mail in another browser signed in as the invited address', async () => {
    await owner.goto(`${stack.base}/app/team`);
    expect(await axeProblems(owner)).toEqual([]);
    const before = stack.smtp.messages.length;
    await owner.type('#inv-email', inviteeEmail);
    await owner.select('#inv-role', 'admin');
    await Promise.all([owner.waitForNavigation(), owner.click('form[action="/app/team/invitations"] button')]);
    expect(await owner.$eval('.notice', (e) => e.textContent)).toContain(`Invitation sent to ${inviteeEmail}`);
    expect(await owner.content()).toContain(inviteeEmail);

    const mail = await stack.smtp.waitFor(
      (m) => stack.smtp.messages.indexOf(m) >= before && m.to.includes(inviteeEmail) && /invited/i.test(m.subject),
      10_000,
    );
    const link = /(http\S+\/app\/invitations\/\S+)/.exec(mail.text)?.[1] as string;
    expect(link.startsWith(stack.base)).toBe(true);

    const invitee = await inviteeCtx.newPage();
    await stack.signInByApi(invitee, inviteeEmail);
    await invitee.goto(link);
    expect(await invitee.$eval('h1', (e) => e.textContent)).toMatch(/^Join /);
    expect(await axeProblems(invitee)).toEqual([]);
    await Promise.all([invitee.waitForNavigation(), invitee.click('form[action$="/accept"] button')]);
    expect(await invitee.$eval('.notice', (e) => e.textContent)).toMatch(/You joined .+ as admin/);

    await owner.goto(`${stack.base}/app/team`);
    const members = await owner.$eval('#members-h', (h) => h.parentElement?.textContent ?? '');
    expect(members).toContain(inviteeEmail);
  }, 120_000);

  it('mints a key on /app/keys, shown once, and the CLI answers with it', async () => {
    await owner.goto(`${stack.base}/app/keys`);
    expect(await axeProblems(owner)).toEqual([]);
    await owner.type('#key-name', 'ci');
    await Promise.all([owner.waitForNavigation(), owner.click('form[action="/app/keys"] button[type=submit]')]);
    const key = (await owner.$eval('#new-api-key', (e) => e.textContent)) as string;
    expect(key).toMatch(/^svc_live_/);
    expect(await owner.$('button[data-copy="new-api-key"]')).not.toBeNull();

    await owner.goto(`${stack.base}/app/keys`);
    expect(await owner.content()).not.toContain(key);

    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORMSVC_')));
    const { stdout } = await run(process.execPath, ['bin/formsvc.js', 'whoami', '--json'], {
      env: {
        ...clean,
        FORMSVC_BASE_URL: stack.base,
        FORMSVC_API_KEY: key,
        FORMSVC_CONFIG: path.join(stack.dir, 'cli-config.json'),
        NO_COLOR: '1',
      },
      timeout: 60_000,
    });
    const who = JSON.parse(stdout);
    expect(who.key.scopes).toEqual(['read']);
    expect(who.key.prefix).toBe(key.slice(0, who.key.prefix.length));
  }, 120_000);

  it('adds a system webhook with its secret shown once, and has no serious accessibility problem on the streams and events pages', async () => {
    // A stream with a source form, so its page has a schema, a source and a preview to check.
    const api = (method: string, p: string, body?: unknown) =>
      fetch(`${stack.base}${p}`, {
        method,
        headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as { id: string } }));
    const form = await api('POST', '/v1/forms', { name: 'Contact' });
    expect(form.status).toBe(201);
    const stream = await api('POST', '/v1/streams', {
      name: 'Leads',
      schema: { json_schema: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } } },
      sources: [{ form_id: form.json.id }],
    });
    expect(stream.status).toBe(201);

    await owner.goto(`${stack.base}/app/webhooks`);
    await owner.type('#wh-url', `${stack.base}/no-receiver`);
    await owner.click('input[name=events][value="stream.schema.changed"]');
    await Promise.all([owner.waitForNavigation(), owner.click('form[action="/app/webhooks"] button[type=submit]')]);
    const secret = (await owner.$eval('#webhook-secret', (e) => e.textContent)) as string;
    expect(secret).toMatch(/^whsec_/);
    expect(await axeProblems(owner)).toEqual([]);
    await Promise.all([owner.waitForNavigation(), owner.click('main a.button')]);
    expect(await owner.content()).not.toContain(secret);
    expect(await axeProblems(owner)).toEqual([]);

    for (const p of ['/app/streams', `/app/streams/${stream.json.id}`, '/app/events', '/app/webhooks']) {
      await owner.goto(`${stack.base}${p}`);
      expect(await owner.$eval('h1', (e) => e.textContent)).toBeTruthy();
      expect(await axeProblems(owner), p).toEqual([]);
    }
  }, 120_000);
});
