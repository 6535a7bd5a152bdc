import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  freePort,
  healthy,
  http,
  killServer,
  loopbackServerEnv,
  onboardOver,
  startServer,
} from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';
import { createScratchDatabase } from '../helpers/scratch-db.js';
import { startSmtpSink } from '../helpers/smtp.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/**
 * Issue 30's operator: two `npm start` servers on one PostgreSQL, each with a DATA_DIR of its own
 * (as two machines have), default settings otherwise. A file posted to either downloads from both.
 */
describe.skipIf(!pgUrl)('two nodes on one PostgreSQL with separate DATA_DIRs', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('serve every file from either node, by the API and by the webhook’s signed link', {
    timeout: 180_000,
  }, async () => {
    const smtp = await startSmtpSink();
    cleanups.push(() => smtp.close());
    const hook = await startReceiver();
    cleanups.push(() => hook.close());
    const db = await createScratchDatabase(pgUrl as string);
    cleanups.push(() => db.drop());
    const nodes: string[] = [];
    for (const name of ['a', 'b']) {
      const port = await freePort();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `formsvc-fleet-${name}-`));
      cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const child = startServer({ ...loopbackServerEnv(port, smtp.url), DATA_DIR: dataDir, DATABASE_URL: db.url });
      cleanups.push(() => killServer(child));
      nodes.push(`http://127.0.0.1:${port}`);
      await healthy(nodes[nodes.length - 1]); // one at a time: the first applies the migrations
    }
    const [a, b] = nodes;

    const key = await onboardOver(a, smtp, `fleet-${crypto.randomUUID().slice(0, 8)}@example.com`);
    const form = (await http(a, 'POST', '/v1/forms', key, { name: 'Fleet' })).json;
    const dest = (
      await http(b, 'POST', '/v1/destinations', key, { type: 'webhook', name: 'h', config: { url: hook.url } })
    ).json;
    expect((await http(a, 'POST', '/v1/routes', key, { form_id: form.id, destination_id: dest.id })).status).toBe(201);

    for (const [i, node] of nodes.entries()) {
      const content = crypto.randomBytes(400_000 + i);
      const body = new FormData();
      body.set('name', `via ${node}`);
      body.set('doc', new Blob([content]), `scan-${i}.bin`);
      const posted = await fetch(`${node}/s/${form.id}`, {
        method: 'POST',
        body,
        headers: { accept: 'application/json' },
      });
      expect(posted.status).toBe(200);
      const submissionId = ((await posted.json()) as { submission_id: string }).submission_id;

      // By the API, through each node.
      for (const reader of nodes) {
        const detail = await http(reader, 'GET', `/v1/submissions/${submissionId}`, key);
        const [att] = detail.json.attachments;
        expect(new URL(att.download_url).origin).toBe(reader);
        const dl = await fetch(att.download_url, { headers: { authorization: `Bearer ${key}` } });
        expect(dl.status, `API download of a file posted to ${node}, through ${reader}`).toBe(200);
        expect(sha(Buffer.from(await dl.arrayBuffer()))).toBe(sha(content));
      }

      // By the signed link of the webhook (made by whichever node's worker sent it), through each node.
      const [req] = await hook.waitFor((q) => q.some((r) => r.json?.submission?.id === submissionId), 30_000);
      const sent = hook.requests.find((r) => r.json?.submission?.id === submissionId) ?? req;
      const link = new URL(sent.json.attachments[0].download_url);
      expect([a, b]).toContain(link.origin);
      for (const reader of nodes) {
        const dl = await fetch(`${reader}${link.pathname}${link.search}`);
        expect(dl.status, `signed link of a file posted to ${node}, through ${reader}`).toBe(200);
        expect(sha(Buffer.from(await dl.arrayBuffer()))).toBe(sha(content));
      }
    }
  });
});
