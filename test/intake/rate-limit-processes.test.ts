import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, healthy, http, killServer, onboardOver, startServer } from '../helpers/process.js';
import { serverDatabase } from '../helpers/scratch-db.js';
import { startSmtpSink } from '../helpers/smtp.js';

/**
 * Two server processes on one PostgreSQL database must enforce one rate limit together: the limit
 * counts stored submissions under a transaction lock, so it cannot be split between processes.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('rate limit across two processes on one PostgreSQL', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('lets exactly max submissions through when posts alternate between the processes', {
    timeout: 120_000,
  }, async () => {
    const smtp = await startSmtpSink();
    cleanups.push(() => smtp.close());
    // One database of their own for both processes: another suite's posts never count against the limit.
    const db = await serverDatabase();
    cleanups.push(() => db.drop());
    const bases: string[] = [];
    for (const worker of ['true', 'false']) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-rl-'));
      const child = startServer({
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_BASE_URL: base,
        DATA_DIR: dataDir,
        ...db.env,
        SMTP_URL: smtp.url,
        MAIL_TRANSPORT: 'smtp',
        WORKER: worker,
        CODE_REQUESTS_PER_IP: '100000',
        SIGN_IN_TRIES_PER_IP: '100000',
      });
      cleanups.push(() => {
        killServer(child);
        fs.rmSync(dataDir, { recursive: true, force: true });
      });
      bases.push(base);
    }
    await Promise.all(bases.map(healthy));
    const key = await onboardOver(bases[0], smtp, `rl-${Date.now()}@example.com`);
    const form = (await http(bases[1], 'POST', '/v1/forms', key, { name: 'Limited' })).json;
    await http(bases[0], 'PATCH', `/v1/forms/${form.id}`, key, { settings: { rate_limit: { max: 3, window_s: 60 } } });
    const client = { 'x-forwarded-for': '198.51.100.77' };
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        http(bases[i % 2], 'POST', `/s/${form.id}`, undefined, { n: i }, client).then((r) => r.status),
      ),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(3);
    expect(answers.filter((s) => s === 429)).toHaveLength(5);
    const subs = (await http(bases[1], 'GET', `/v1/forms/${form.id}/submissions?limit=200`, key)).json.data;
    expect(subs).toHaveLength(8);
    expect(subs.filter((s: any) => s.status === 'received')).toHaveLength(3);
    expect(subs.filter((s: any) => s.quarantine_reason === 'rate_limited')).toHaveLength(5);
  });
});
