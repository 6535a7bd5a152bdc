import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, healthy, killServer, startServer } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { startSmtpSink } from '../helpers/smtp.js';

/**
 * The whole agent path over stdio against a real server process: an MCP client that starts
 * `formsvc mcp` without any key goes from nothing to a delivered test submission in three tool calls.
 */
const cleanups: (() => Promise<unknown> | unknown)[] = [];
let base: string;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tmp: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  cleanups.push(() => smtp.close());
  receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-mcp-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const child = startServer({
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: base,
    DATA_DIR: path.join(tmp, 'data'),
    SMTP_URL: smtp.url,
    MAIL_TRANSPORT: 'smtp',
    OUTBOUND_ALLOW_PRIVATE: 'true',
    WORKER_TICK_MS: '200',
    RETRY_BASE_MS: '100',
    CODE_REQUESTS_PER_IP: '100000',
    SIGN_IN_TRIES_PER_IP: '100000',
  });
  cleanups.push(() => killServer(child));
  await healthy(base);
}, 90_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** `formsvc mcp` as an agent host starts it: the CLI when present, else the stdio entry itself. */
function stdioCommand(): string[] {
  if (fs.existsSync('bin/formsvc.js')) return ['bin/formsvc.js', 'mcp'];
  return ['--import', 'tsx', 'mcp/main.ts'];
}

describe('MCP over stdio, started without a key', () => {
  it('lists the tools and reaches a delivered test submission in three tool calls', { timeout: 120_000 }, async () => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('FORMSVC_')) env[k] = v;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: stdioCommand(),
      cwd: process.cwd(),
      // No key anywhere: not in the environment, and a profile file that does not exist.
      env: { ...env, FORMSVC_BASE_URL: base, FORMSVC_CONFIG: path.join(tmp, 'no-profiles.json') },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'mcp-stdio-test', version: '0.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());

    const tools = (await client.listTools()).tools;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['auth_request_code', 'auth_verify_code', 'sandboxes_create', 'quickstart_and_verify']),
    );
    const qv = tools.find((t) => t.name === 'quickstart_and_verify');
    expect(qv?.inputSchema.properties).toHaveProperty('webhook_url');
    expect(tools.find((t) => t.name === 'forms_delete')?.annotations?.destructiveHint).toBe(true);

    let calls = 0;
    const call = async (name: string, args: Record<string, unknown>) => {
      calls += 1;
      return (await client.callTool({ name, arguments: args }, undefined, { timeout: 100_000 })) as any;
    };

    const email = `mcp-${Date.now()}@example.com`;
    const asked = await call('auth_request_code', { email });
    expect(asked.isError).toBeFalsy();
    const mail = await smtp.waitFor((m) => m.to.includes(email), 15_000);
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
    expect(code).toBeTruthy();

    const verified = await call('auth_verify_code', { email, code });
    expect(verified.isError).toBeFalsy();
    expect(verified.structuredContent.api_key).toBeTruthy();
    expect(verified.content[0].text).toContain('now uses the new key');

    const done = await call('quickstart_and_verify', { name: 'Contact', webhook_url: receiver.url, wait_seconds: 90 });
    expect(done.isError, done.content[0].text).toBeFalsy();
    const result = done.structuredContent;
    expect(result.ok, done.content[0].text).toBe(true);
    expect(result.form.id).toMatch(/^fm_/);
    expect(result.deliveries.length).toBe(2); // the owner's email and the webhook
    expect(result.deliveries.every((d: any) => d.status === 'sent')).toBe(true);
    expect(result.embed.html).toContain(result.form.id);
    expect(calls).toBe(3);

    const hook = receiver.requests.find((r) => r.json?.submission?.id === result.submission.submission_id);
    expect(hook?.headers['service-event']).toBe('submission.received');
    // Given without a secret, the webhook is signed with a generated one, shown once with how to verify.
    expect(result.webhook_signing.secret).toMatch(/^whsec_/);
    expect(done.content[0].text).toContain(`Webhook secret (shown once, keep it): ${result.webhook_signing.secret}`);
    expect(done.content[0].text).toMatch(/Service-Signature.*webhook-signature/);
    expect(
      new Webhook(result.webhook_signing.secret).verify(hook!.raw.toString(), hook!.headers as never),
    ).toBeTruthy();
  });
});
