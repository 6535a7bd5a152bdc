import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { until } from './receiver.js';
import type { startSmtpSink } from './smtp.js';

/**
 * The settings of a server process on loopback at `port` mailing through an SMTP sink: private
 * webhook targets allowed, quiet logs, a short worker tick (fault tests and the bench).
 */
export function loopbackServerEnv(port: number, smtpUrl: string): Record<string, string> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    SMTP_URL: smtpUrl,
    MAIL_TRANSPORT: 'smtp',
    OUTBOUND_ALLOW_PRIVATE: 'true',
    CODE_REQUESTS_PER_IP: '100000',
    SIGN_IN_TRIES_PER_IP: '100000',
    LOG_LEVEL: 'error',
    WORKER_TICK_MS: '200',
  };
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * `npm start`'s server (the compiled dist/server/main.js, which the tests' globalSetup keeps built)
 * as its own process, in its own process group so a kill takes it whole.
 */
export function startServer(env: Record<string, string>): ChildProcess {
  // SERVER_LOG_FILE=path appends the servers' JSON logs there (to see what a fault test's server
  // said), at SERVER_LOG_LEVEL when that is set (over the test's own level).
  const level = process.env.SERVER_LOG_LEVEL ? { LOG_LEVEL: process.env.SERVER_LOG_LEVEL } : {};
  const logFile = process.env.SERVER_LOG_FILE;
  const out = logFile ? fs.openSync(logFile, 'a') : 'ignore';
  try {
    return spawn(process.execPath, [path.resolve('dist/server/main.js')], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env, ...level },
      stdio: ['ignore', out, 'inherit'],
      detached: true,
    });
  } finally {
    if (typeof out === 'number') fs.closeSync(out);
  }
}

/** SIGKILL to the server's whole process group. */
export function killServer(c: ChildProcess) {
  try {
    if (c.pid) process.kill(-c.pid, 'SIGKILL');
  } catch {}
}

/** One JSON request to a server over loopback. */
export async function http(base: string, method: string, p: string, key?: string, json?: unknown, headers = {}) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

export const healthy = (base: string) =>
  until(
    'server healthy',
    async () => {
      // A pooled connection to a killed server must not stall the check: each try has its own deadline.
      const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
      return r?.ok === true;
    },
    60_000,
  );

/** A manage key for a new address, through the real email-code flow of a running server. */
export async function onboardOver(base: string, smtp: Awaited<ReturnType<typeof startSmtpSink>>, email: string) {
  const rc = await http(base, 'POST', '/v1/auth/request-code', undefined, { email });
  if (rc.status !== 200) throw new Error(`request-code: ${rc.status}`);
  const mail = await smtp.waitFor((m) => m.to.includes(email), 10_000);
  const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
  const v = await http(base, 'POST', '/v1/auth/verify-code', undefined, { email, code });
  if (v.status !== 201) throw new Error(`verify-code: ${v.status}`);
  return v.json.api_key as string;
}
