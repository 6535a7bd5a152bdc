import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, healthy, http, killServer, onboardOver, startServer } from '../helpers/process.js';
import { startReceiver, until } from '../helpers/receiver.js';
import { serverDatabase } from '../helpers/scratch-db.js';
import { startSmtpSink } from '../helpers/smtp.js';

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
    const db = await serverDatabase();
    cleanups.push(() => db.drop());
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
      // Other suites' code requests come from this IP too.
      CODE_REQUESTS_PER_IP: '100000',
      SIGN_IN_TRIES_PER_IP: '100000',
      ...db.env,
    };
    const first = startServer(env);
    cleanups.push(() => killServer(first));
    await healthy(base);

    const email = `crash-${Date.now()}@example.com`;
    const key = await onboardOver(base, smtp, email);
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
    killServer(first);
    await new Promise((r) => first.once('exit', r));

    hang = false;
    const second = startServer(env);
    cleanups.push(() => killServer(second));
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
    killServer(second);
  });
});
