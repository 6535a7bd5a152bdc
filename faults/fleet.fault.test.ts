import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { privateCluster } from './helpers/cluster.js';
import { pool } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, type ServerProcess, serverProcess, tenant } from './helpers/service.js';

const TOTAL = 2000;
const CONCURRENCY = 20;
const IPS = 50;
/** The worker node is killed once this many deliveries arrived. */
const KILL_AT = 600;

interface Post {
  status: number;
  submissionId?: string;
  body: string;
}

/** One multipart post with a small file, retried with the same Idempotency-Key while unanswered. */
async function postWithFile(base: string, formId: string, i: number): Promise<Post> {
  const body = `file ${i} ${'x'.repeat(i % 64)}`;
  for (let attempt = 0; ; attempt += 1) {
    const form = new FormData();
    form.set('n', String(i));
    form.set('doc', new Blob([body], { type: 'text/plain' }), `f${i}.txt`);
    try {
      const res = await fetch(`${base}/s/${formId}`, {
        method: 'POST',
        body: form,
        headers: {
          accept: 'application/json',
          'idempotency-key': `fleet-${i}`,
          'x-forwarded-for': `198.51.100.${(i % IPS) + 1}`,
        },
        signal: AbortSignal.timeout(15_000),
      });
      const json = (await res.json().catch(() => ({}))) as { submission_id?: string };
      return { status: res.status, submissionId: json.submission_id, body };
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Three nodes on one private PostgreSQL cluster behind a round-robin in the test: two `all` nodes
 * (A, B) take the posts, a `worker` node (W) helps drain and is killed with -9 mid-drain.
 */
describe('a fleet of three nodes, one killed mid-drain', () => {
  const c = cleanups();
  afterAll(() => c.run());
  let nodes: ServerProcess[] = [];
  let key = '';
  let files: { id: string; submissionId: string; body: string; signed: string }[] = [];

  it('stores every acked submission and sends every delivery', { timeout: 240_000 }, async () => {
    const pg = await privateCluster();
    c.add(() => pg.destroy());
    const smtp = await startSmtpSink();
    c.add(() => smtp.close());
    const hook = await startFaultReceiver();
    c.add(() => hook.close());
    const env = { DATABASE_URL: pg.url, WORKER_LEASE_MS: '3000', RETRY_BASE_MS: '100' };
    const a = await serverProcess(smtp, env);
    const b = await serverProcess(smtp, env);
    const w = await serverProcess(smtp, { ...env, ROLE: 'worker' });
    nodes = [a, b, w];
    for (const s of nodes) c.add(() => s.stop());
    await a.start();
    await Promise.all([b.start(), w.start()]);
    const t = await tenant(a.base, smtp, [hook.url], { rate_limit: { max: 1000, window_s: 3600 } });
    key = t.key;

    let killed: Promise<void> | null = null;
    const watcher = until(
      'deliveries under way',
      async () => {
        if (hook.accepted().size < KILL_AT) return false;
        killed = w.kill();
        return true;
      },
      120_000,
    );
    const posts = await pool(TOTAL, CONCURRENCY, (i) => postWithFile([a, b][i % 2].base, t.formId, i));
    await watcher;
    await killed;
    expect(w.alive()).toBe(false);
    expect(posts.filter((p) => p.status !== 200)).toEqual([]);
    const ids = posts.map((p) => p.submissionId as string);
    expect(new Set(ids).size).toBe(TOTAL);

    // Every acked submission is stored, read through the node that did not take it.
    const looked = await pool(TOTAL, CONCURRENCY, (i) =>
      http([b, a][i % 2].base, 'GET', `/v1/submissions/${ids[i]}`, key),
    );
    expect(looked.filter((l) => l.status !== 200)).toEqual([]);

    // Every delivery is sent, whichever node took it; the kill lost none.
    await hook.waitForDistinct(TOTAL, 120_000);
    await until(
      'no delivery left pending, sending or failed',
      async () => {
        for (const status of ['pending', 'sending', 'failed']) {
          const page = await http(a.base, 'GET', `/v1/deliveries?form_id=${t.formId}&status=${status}&limit=1`, key);
          if (page.json.data.length) return false;
        }
        return true;
      },
      30_000,
    );
    const delivered = new Set([...hook.accepted().values()].map((hits) => hits[0].body.submission.id));
    expect(ids.filter((id) => !delivered.has(id))).toEqual([]);
    files = [...hook.accepted().values()].flatMap(([hit]) =>
      (hit.body.attachments ?? []).map((f: { id: string; download_url: string }) => ({
        id: f.id,
        submissionId: hit.body.submission.id,
        body: posts[ids.indexOf(hit.body.submission.id)].body,
        signed: f.download_url,
      })),
    );
    expect(files).toHaveLength(TOTAL);
    console.log(
      `fleet: ${TOTAL} posts with files through two nodes, worker node killed after ${KILL_AT} deliveries, all sent`,
    );
  });

  // Each node has its own DATA_DIR: files are readable through every node because the default
  // attachment storage on PostgreSQL is the database itself (ATTACHMENT_STORAGE=postgres).
  it('serves every file through every live node, by the API and by the signed link', async () => {
    const live = nodes.filter((n) => n.alive());
    expect(live).toHaveLength(2);
    const failures: string[] = [];
    await pool(files.length, CONCURRENCY, async (i) => {
      const f = files[i];
      const signed = new URL(f.signed);
      // The API's own link to the file: the submission's attachments[].download_url, read with a key.
      const detail = await http(live[i % 2].base, 'GET', `/v1/submissions/${f.submissionId}`, key);
      const api = new URL(detail.json.attachments[0].download_url);
      for (const node of live) {
        for (const [how, url, headers] of [
          ['signed', `${node.base}${signed.pathname}${signed.search}`, {}],
          ['api', `${node.base}${api.pathname}${api.search}`, { authorization: `Bearer ${key}` }],
        ] as const) {
          const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
          const text = await res.text();
          if (res.status !== 200 || text !== f.body) failures.push(`${how} ${f.id} via ${node.base}: ${res.status}`);
        }
      }
    });
    expect(failures.slice(0, 10)).toEqual([]);
  });
});
