import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import type { Deps } from '../../server/core/deps.js';
import { type Database, openPglite, openPostgres } from '../../server/db/client.js';
import { createStorage } from '../../server/files/router.js';
import { createLogger } from '../../server/log.js';
import { createMailer } from '../../server/mail.js';
import type { IntakeLoad } from '../../server/worker/intake-load.js';
import { createOutbound } from '../../server/worker/outbound.js';
import { Worker } from '../../server/worker/worker.js';
import { checkResponse } from './responses.js';
import { createScratchDatabase } from './scratch-db.js';
import { startSmtpSink } from './smtp.js';

export type TestEnv = Awaited<ReturnType<typeof startTestApp>>;

export interface ApiOptions {
  key?: string | null;
  json?: unknown;
  body?: string | Uint8Array | FormData;
  headers?: Record<string, string>;
}

/**
 * The real app in process on a fresh database: in-memory PGlite with the real migrations, or the
 * PostgreSQL server of TEST_DATABASE_URL. Mail goes to a real SMTP server on loopback.
 */
export async function startTestApp(env: Record<string, string> = {}) {
  const smtp = await startSmtpSink();
  const config = loadConfig({
    PUBLIC_BASE_URL: 'http://127.0.0.1:8787',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Forms <forms@example.com>',
    CODE_REQUESTS_PER_IP: '100000',
    SIGN_IN_TRIES_PER_IP: '100000',
    LOG_LEVEL: 'silent',
    // Small, so retries finish quickly: on a shared PostgreSQL any suite's worker may take an attempt.
    RETRY_BASE_MS: '10',
    WORKER_TICK_MS: '200',
    DIGEST_CHECK_MS: '300',
    HOUSEKEEPING_MS: '300',
    SEARCH_INDEX_MS: '200',
    ...env,
  });
  const url = process.env.TEST_DATABASE_URL;
  // On PostgreSQL each app gets a database of its own on that server (migrated from scratch), so a
  // suite's worker never takes another suite's deliveries.
  const own = url ? await createScratchDatabase(url) : null;
  const database: Database = own ? await openPostgres(own.url, { max: 5 }) : await openPglite(null);
  const mailer = createMailer(config);
  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-files-'));
  let wakes = 0;
  let worker: Worker | null = null;
  const outbound = createOutbound({ allowPrivate: config.outboundAllowPrivate, timeoutMs: config.webhookTimeoutMs });
  const deps: Deps = {
    config,
    database,
    mailer,
    storage: createStorage(config.storage, database, filesDir),
    log: createLogger('silent'),
    wake: () => {
      wakes += 1;
      worker?.wake();
    },
    now: () => new Date(),
    fetch,
    outbound,
  };
  const app = buildApp(deps);

  async function request(method: string, path: string, opts: ApiOptions = {}) {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    // A session cookie is a browser's: unless the test says where the request comes from, it comes
    // from the service's own pages, as a browser would say (the /v1 cookie check, server/http/csrf.ts).
    const named = new Set(Object.keys(headers).map((k) => k.toLowerCase()));
    if (named.has('cookie') && !['origin', 'sec-fetch-site', 'x-csrf-token'].some((h) => named.has(h))) {
      headers['sec-fetch-site'] = 'same-origin';
    }
    let body: RequestInit['body'];
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    } else if (opts.body !== undefined) {
      body = opts.body as RequestInit['body'];
    }
    const res = await app.request(path, { method, headers, body });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    // Every 2xx JSON answer is what the contract says, so a field the server forgets fails the test.
    checkResponse(method, path, res.status, res.headers.get('content-type'), json);
    return { status: res.status, headers: res.headers, text, json };
  }

  /** Email-code onboarding through the API; returns the verify-code answer and its key. */
  async function onboard(
    email = `u-${crypto.randomUUID().slice(0, 8)}@example.com`,
    extra: Record<string, unknown> = {},
  ) {
    const before = smtp.messages.length;
    const rc = await request('POST', '/v1/auth/request-code', { json: { email } });
    if (rc.status !== 200) throw new Error(`request-code: ${rc.status} ${rc.text}`);
    const mail = await smtp.waitFor((m) => smtp.messages.indexOf(m) >= before && m.to.includes(email.toLowerCase()));
    const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
    const v = await request('POST', '/v1/auth/verify-code', { json: { email, code, ...extra } });
    if (v.status !== 201) throw new Error(`verify-code: ${v.status} ${v.text}`);
    return { email: email.toLowerCase(), key: v.json.api_key as string, verify: v.json, code: code as string };
  }

  return {
    app,
    deps,
    smtp,
    request,
    onboard,
    get wakes() {
      return wakes;
    },
    api: (method: string, path: string, key: string | null, opts: Omit<ApiOptions, 'key'> = {}) =>
      request(method, path, { ...opts, key }),
    /** Starts the delivery worker in process (tests that need deliveries sent). */
    async startWorker(intakeLoad?: IntakeLoad) {
      worker ??= new Worker(deps, { config, mailer, outbound }, intakeLoad);
      await worker.start();
      deps.handoff = worker.handoff;
      return worker;
    },
    async close() {
      await worker?.stop(2000);
      await outbound.close();
      mailer.close();
      await database.close();
      await own?.drop();
      await smtp.close();
      fs.rmSync(filesDir, { recursive: true, force: true });
    },
  };
}
