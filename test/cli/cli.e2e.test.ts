import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, healthy, killServer, startServer } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';
import { serverDatabase } from '../helpers/scratch-db.js';
import { startSmtpSink } from '../helpers/smtp.js';

type Run = { code: number | null; stdout: string; stderr: string };

/**
 * The formsvc binary end to end: a real server process (PGlite in a temp DATA_DIR, or
 * TEST_DATABASE_URL), mail to a local SMTP sink, webhooks to a local receiver, and `node bin/formsvc.js`
 * as a child process with its own profile file.
 */
describe('formsvc CLI against a running server', () => {
  const cleanups: (() => unknown)[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-cli-'));
  const config = path.join(dir, 'config', 'profiles.json');
  let base = '';
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const email = `cli-${Date.now()}@example.com`;
  let formId = '';

  function start(args: string[], env: Record<string, string> = {}): ChildProcess {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FORMSVC_')));
    return spawn(process.execPath, ['bin/formsvc.js', ...args], {
      env: { ...clean, FORMSVC_CONFIG: config, FORMSVC_BASE_URL: base, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  function collect(child: ChildProcess, timeoutMs = 45_000): Promise<Run> & { out: () => string } {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c) => {
      stdout += c;
    });
    child.stderr?.on('data', (c) => {
      stderr += c;
    });
    const done = new Promise<Run>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
    return Object.assign(done, { out: () => stdout });
  }

  const cli = (args: string[], env?: Record<string, string>) => collect(start(args, env));
  const json = (r: Run) => JSON.parse(r.stdout);

  beforeAll(async () => {
    smtp = await startSmtpSink();
    receiver = await startReceiver();
    cleanups.push(
      () => smtp.close(),
      () => receiver.close(),
    );
    const db = await serverDatabase();
    cleanups.push(() => db.drop());
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const server = startServer({
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      DATA_DIR: path.join(dir, 'data'),
      ...db.env,
      SMTP_URL: smtp.url,
      MAIL_TRANSPORT: 'smtp',
      OUTBOUND_ALLOW_PRIVATE: 'true',
      RETRY_BASE_MS: '200',
      WORKER_TICK_MS: '200',
      CODE_REQUESTS_PER_IP: '100000',
      SIGN_IN_TRIES_PER_IP: '100000',
    });
    cleanups.push(() => killServer(server));
    fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
    await healthy(base);
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('logs in by email code (two script steps), saves a 0600 profile, and whoami uses it', async () => {
    const sent = await cli(['login', '--email', email]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(json(sent)).toMatchObject({ ok: true, email });
    const mail = await smtp.waitFor((m) => m.to.includes(email), 10_000);
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1] as string;

    const done = await cli(['login', '--email', email, '--code', code]);
    expect(done.code, done.stderr).toBe(0);
    expect(json(done)).toMatchObject({ ok: true, profile: 'default', base_url: base, scopes: ['manage'] });
    expect(done.stdout).not.toMatch(/fk_/); // the key is saved, never printed
    expect(fs.statSync(config).mode & 0o777).toBe(0o600);

    const me = await cli(['whoami', '--json']);
    expect(me.code, me.stderr).toBe(0);
    expect(json(me).key.scopes).toEqual(['manage']);
  }, 60_000);

  it('quickstart --wait creates a routed form and waits until the test webhook is delivered', async () => {
    const r = await cli(['quickstart', '--name', 'Contact', '--webhook-url', receiver.url, '--wait']);
    expect(r.code, r.stderr).toBe(0);
    const out = json(r);
    formId = out.form.id;
    expect(out.embed.html).toContain(`/s/${formId}`);
    expect(out.test).toMatchObject({ ok: true, end: 'done' });
    expect(out.test.deliveries.every((d: { status: string }) => d.status === 'sent')).toBe(true);
    expect(r.stderr).toMatch(/Test submission delivered/);
    const hook = receiver.requests.find((q) => q.json?.submission?.id === out.test.submission_id);
    expect(hook?.json.submission.test).toBe(true);
    // Given without a secret, the webhook is signed with a generated one, printed once with how to verify.
    expect(out.webhook_signing.secret).toMatch(/^whsec_/);
    expect(out.webhook_signing.verify).toMatch(/Service-Signature/);
    expect(hook?.headers['service-signature']).toMatch(/^t=\d+,v1=/);
  }, 60_000);

  it('quickstart --slack-url --discord-url routes to both; --wait follows them to sent and the warnings are printed', async () => {
    const r = await cli([
      'quickstart',
      '--name',
      'Chat',
      '--slack-url',
      `${receiver.url}?slack`,
      '--discord-url',
      `${receiver.url}?discord`,
      '--wait',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = json(r);
    expect(out.destinations.map((d: { type: string }) => d.type)).toEqual(['email', 'slack', 'discord']);
    expect(out.warnings).toHaveLength(2);
    expect(out.test).toMatchObject({ ok: true, end: 'done' });
    const slack = receiver.requests.find((q) => q.url === '/hook?slack');
    expect(slack?.json.blocks[0]).toMatchObject({ type: 'header', text: { text: 'Chat' } });
    const discord = receiver.requests.find((q) => q.url === '/hook?discord');
    expect(discord?.json.allowed_mentions).toEqual({ parse: [] });
  }, 60_000);

  it('submits with a file, then deliveries tail prints its deliveries and stops cleanly on Ctrl-C', async () => {
    const file = path.join(dir, 'note.txt');
    fs.writeFileSync(file, 'hello');
    const sub = await cli([
      'submit',
      formId,
      '--field',
      'email=ada@example.com',
      '--field',
      'message=Hi',
      '--file',
      `doc=${file}`,
    ]);
    expect(sub.code, sub.stderr).toBe(0);
    const s = json(sub);
    expect(s).toMatchObject({ ok: true, status: 'received' });

    const child = start(['deliveries', 'tail', '--form', formId]);
    const run = collect(child);
    await until('tail shows the new submission', async () => run.out().includes(s.submission_id), 30_000);
    child.kill('SIGINT');
    const r = await run;
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Stopped/);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.some((d) => d.submission_id === s.submission_id)).toBe(true);
  }, 60_000);

  it('a 422 names the invalid fields on stderr too when stdout is not a terminal', async () => {
    const r = await cli(['forms', 'create', '--data', '{"tags":"x"}']);
    expect(r.code).toBe(1);
    const { error } = json(r);
    expect(error.code).toBe('validation_failed');
    const paths = error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'tags']));
    expect(r.stderr).toContain(`Error: ${error.message} (validation_failed)`);
    for (const p of ['name', 'tags']) expect(r.stderr).toMatch(new RegExp(`^  ${p}: \\S`, 'm'));
  }, 60_000);

  it('a mistyped command names the closest one as the docs write it; help names form ids fm_…', async () => {
    const [lsit, topic, far, help, submitHelp] = await Promise.all([
      cli(['forms', 'lsit', '--limit', '5']),
      cli(['form', 'list']),
      cli(['frobnicate']),
      cli(['forms', 'get', '--help']),
      cli(['submit', '--help']),
    ]);
    expect(lsit.code).toBe(2);
    expect(lsit.stderr).toBe('formsvc: "forms lsit" is not a command. Did you mean "forms list"?\n');
    expect(topic.code).toBe(2);
    expect(topic.stderr).toBe('formsvc: "form list" is not a command. Did you mean "forms list"?\n');
    expect(far.code).toBe(2);
    expect(far.stderr).toBe('formsvc: "frobnicate" is not a command. See formsvc --help for the commands.\n');
    expect(help.stdout).toContain('the form id (fm_…)');
    expect(help.stdout).toContain('formsvc forms get <fm_…>');
    expect(submitHelp.stdout).toContain('formsvc submit <fm_…>');
    expect(`${help.stdout}${submitHelp.stdout}`).not.toMatch(/frm_/);
  }, 60_000);

  it('forms export streams the CSV or NDJSON to stdout; an unknown form fails with the API’s error', async () => {
    const csv = await cli(['forms', 'export', formId, '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.charCodeAt(0)).toBe(0xfeff);
    const records: Record<string, string>[] = parse(csv.stdout, { bom: true, columns: true });
    const ada = records.find((r) => r.email === 'ada@example.com');
    expect(ada).toMatchObject({ status: 'received', message: 'Hi' });
    expect(ada?.doc_url).toMatch(new RegExp(`^${base}/v1/submissions/${ada?.id}/attachments/fl_`));
    const nd = await cli(['forms', 'export', formId, '--format', 'ndjson', '--q', 'ada']);
    expect(nd.code, nd.stderr).toBe(0);
    const lines = nd.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual([ada?.id]);
    const missing = await cli(['forms', 'export', 'fm_nope', '--format', 'csv']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('not_found');
  }, 60_000);

  it('fails clearly: wrong key, unreachable server, an HTML server, a wrong flag type, a missing file', async () => {
    const html = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><h1>Welcome to nginx!</h1>');
    });
    await new Promise<void>((r) => html.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => html.close(r)));
    const htmlBase = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
    const closed = `http://127.0.0.1:${await freePort()}`;

    const [wrongKey, wrongCode, unreachable, page, badFlag, noFile] = await Promise.all([
      cli(['whoami', '--api-key', 'fk_wrong', '--json']),
      cli(['login', '--email', email, '--code', '000000']),
      cli(['forms', 'list', '--no-json'], { FORMSVC_BASE_URL: closed, FORMSVC_API_KEY: 'fk_x' }),
      cli(['forms', 'list', '--no-json'], { FORMSVC_BASE_URL: htmlBase, FORMSVC_API_KEY: 'fk_x' }),
      cli(['forms', 'list', '--limit', 'many']),
      cli(['submit', formId, '--file', `doc=${path.join(dir, 'missing.pdf')}`]),
    ]);

    expect(wrongKey.code).toBe(1);
    expect(json(wrongKey).error).toMatchObject({ code: 'unauthorized' });
    expect(wrongKey.stderr).toContain(json(wrongKey).error.message);
    // The way out on the command line: a new key from formsvc login, said where the bad key came from.
    expect(json(wrongKey).error.hint).toMatch(
      /--api-key is not valid for http:\/\/127\.0\.0\.1:\d+\. Run formsvc login/,
    );
    expect(wrongKey.stderr).toContain('Hint: The API key from --api-key is not valid');
    // A wrong email code is a 401 too, but not the key's fault: the API's own hint stays.
    expect(wrongCode.code).toBe(1);
    expect(json(wrongCode).error.code).toBe('unauthorized');
    expect(json(wrongCode).error.hint).not.toMatch(/API key from/);

    const oneLine = (r: Run) => r.stderr.trim().split('\n');
    expect(unreachable.code).toBe(1);
    expect(oneLine(unreachable)).toHaveLength(1);
    expect(unreachable.stderr).toMatch(/Could not reach http:\/\/127\.0\.0\.1:\d+/);

    expect(page.code).toBe(1);
    expect(oneLine(page)).toHaveLength(1);
    expect(page.stderr).toMatch(/text\/html, not the formsvc JSON API/);

    expect(badFlag.code).toBe(2);
    expect(oneLine(badFlag)).toEqual(['Error: --limit expects an integer, got "many"']);

    expect(noFile.code).toBe(2);
    expect(oneLine(noFile)).toHaveLength(1);
    expect(noFile.stderr).toMatch(/missing\.pdf: no such file/);
  }, 60_000);
});
