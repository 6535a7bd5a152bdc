import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startReceiver, until } from '../helpers/receiver.js';
import { startSmtpSink } from '../helpers/smtp.js';

/** A free loopback port. */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** `npm start`'s entry point as its own process (own process group, so a kill takes it whole). */
function startServer(env: Record<string, string>): ChildProcess {
  const tsx = path.resolve('node_modules/.bin/tsx');
  const child = spawn(tsx, ['server/main.ts'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  return child;
}

async function http(base: string, method: string, p: string, key?: string, json?: unknown) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const healthy = (base: string) =>
  until(
    'server healthy',
    async () => {
      // A pooled connection to the killed server must not stall the check: each try has its own deadline.
      const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      return r?.ok === true;
    },
    60_000,
  );

describe('a server killed while deliveries are sending', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('delivers every one of them after a restart (at least once)', { timeout: 120_000 }, async () => {
    const smtp = await startSmtpSink();
    cleanups.push(() => smtp.close());
    let hang = true;
    const hook = await startReceiver(() => (hang ? { hangMs: 60_000 } : { status: 200 }));
    cleanups.push(() => hook.close());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-crash-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      DATA_DIR: dataDir,
      SMTP_URL: smtp.url,
      MAIL_TRANSPORT: 'smtp',
      WORKER_TICK_MS: '200',
      RETRY_BASE_MS: '100',
      WORKER_LEASE_MS: '1500',
      WEBHOOK_TIMEOUT_MS: '30000',
      OUTBOUND_ALLOW_PRIVATE: 'true',
      // Other suites share a PostgreSQL test database, and their code requests come from this IP too.
      CODE_REQUESTS_PER_IP: '100000',
      ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : {}),
    };
    const first = startServer(env);
    const kill = (c: ChildProcess) => {
      try {
        if (c.pid) process.kill(-c.pid, 'SIGKILL');
      } catch {}
    };
    cleanups.push(() => kill(first));
    await healthy(base);

    const email = `crash-${Date.now()}@example.com`;
    expect((await http(base, 'POST', '/v1/auth/request-code', undefined, { email })).status).toBe(200);
    const mail = await smtp.waitFor((m) => m.to.includes(email), 10_000);
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
    const key = (await http(base, 'POST', '/v1/auth/verify-code', undefined, { email, code })).json.api_key;
    const form = (await http(base, 'POST', '/v1/forms', key, { name: 'Crash' })).json;
    const dest = (
      await http(base, 'POST', '/v1/destinations', key, { type: 'webhook', name: 'h', config: { url: hook.url } })
    ).json;
    await http(base, 'POST', '/v1/routes', key, { form_id: form.id, destination_id: dest.id });
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const r = await http(base, 'POST', `/s/${form.id}`, undefined, { n: i });
      const d = await http(base, 'GET', `/v1/deliveries?submission_id=${r.json.submission_id}`, key);
      ids.push(d.json.data[0].id);
    }
    // The receiver holds every request open: the deliveries are claimed and `sending` when we kill.
    await hook.waitFor((reqs) => reqs.length >= 3, 20_000);
    const sending = await http(base, 'GET', `/v1/deliveries?form_id=${form.id}&status=sending`, key);
    expect(sending.json.data.length).toBe(3);
    kill(first);
    await new Promise((r) => first.once('exit', r));

    hang = false;
    const second = startServer(env);
    cleanups.push(() => kill(second));
    await healthy(base);
    for (const id of ids) {
      await until(
        `delivery ${id} sent after the restart`,
        async () => {
          const d = await http(base, 'GET', `/v1/deliveries/${id}`, key);
          return d.json.status === 'sent';
        },
        30_000,
      );
    }
    const seen = new Set(hook.requests.map((r) => r.headers['service-delivery']));
    for (const id of ids) expect(seen.has(id)).toBe(true);
    kill(second);
  });
});
