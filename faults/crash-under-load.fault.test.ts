import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { pool, type Reply, send, sleep, submissionIdOf } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, databaseAndMail, listAll, serverProcess, tenant } from './helpers/service.js';

const TOTAL = 2000;
const CONCURRENCY = 20;
/** Client addresses (X-Forwarded-For from loopback is trusted): 80 posts each against a limit of 76. */
const IPS = 25;
const PER_IP = TOTAL / IPS;
const RATE_MAX = 76;
const KILL_AFTER = 700;
/**
 * A delivery is in flight from its send until its outcome is recorded: at most the sends under way
 * (WORKER_CONCURRENCY, 16 by default) plus the finished ones the worker records together (at most
 * 500 per settle statement, server/worker/recorder.ts). Only those may be sent again.
 */
const IN_FLIGHT_MAX = 16 + 500;

describe('kill -9 of the server during a 2,000-submission load', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('keeps every answered submission and delivers every planned delivery after a restart', async () => {
    const { db, smtp } = await databaseAndMail(c, 'crash');
    const hook = await startFaultReceiver();
    c.add(() => hook.close());
    const server = await serverProcess(smtp, { DATABASE_URL: db.url, WORKER_LEASE_MS: '2000', RETRY_BASE_MS: '100' });
    c.add(() => server.stop());
    await server.start();
    const { key, formId } = await tenant(server.base, smtp, [hook.url], {
      rate_limit: { max: RATE_MAX, window_s: 3600 },
    });

    // Each client retries a post that got no answer with the same Idempotency-Key, as a careful
    // client would: the ones in flight at the kill either committed (the retry replays them) or not.
    let answered = 0;
    let deadAt = 0;
    let restart: Promise<void> | null = null;
    const unanswered: number[] = new Array(TOTAL).fill(0);
    const loadStarted = Date.now();
    const answers: Reply[] = await pool(TOTAL, CONCURRENCY, async (i) => {
      const headers = { 'idempotency-key': `load-${i}`, 'x-forwarded-for': `198.51.100.${(i % IPS) + 1}` };
      const deadline = Date.now() + 60_000;
      for (;;) {
        const r = await send(`${server.base}/s/${formId}`, { json: { n: i }, headers, timeoutMs: 15_000 });
        if (r.status !== 0 || Date.now() > deadline) {
          answered += 1;
          if (answered === KILL_AFTER) {
            restart = server.kill().then(() => {
              deadAt = Date.now();
              return server.start();
            });
          }
          return r;
        }
        unanswered[i] += 1;
        await sleep(100);
      }
    });
    await restart;
    const loadMs = Date.now() - loadStarted;

    // Every post was answered in the end: 200, or 429 past the per-address limit, exactly.
    const byStatus = new Map<number, number>();
    for (const r of answers) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    expect(Object.fromEntries(byStatus)).toEqual({
      200: TOTAL - IPS * (PER_IP - RATE_MAX),
      429: IPS * (PER_IP - RATE_MAX),
    });
    expect(unanswered.some((n) => n > 0)).toBe(true); // the kill did cut requests off

    // Every answer's submission is stored, once, with the status the answer gave.
    const ids = answers.map(submissionIdOf);
    expect(new Set(ids).size).toBe(TOTAL);
    const looked = await pool(TOTAL, CONCURRENCY, async (i) => {
      const s = await http(server.base, 'GET', `/v1/submissions/${ids[i]}`, key);
      return { status: s.status, sub: s.json };
    });
    for (const [i, l] of looked.entries()) {
      expect(l.status, `submission ${ids[i]}`).toBe(200);
      if (answers[i].status === 200) expect(l.sub.status).toBe('received');
      else expect([l.sub.status, l.sub.quarantine_reason]).toEqual(['quarantined', 'rate_limited']);
    }
    expect(await listAll(server.base, key, `/v1/forms/${formId}/submissions`)).toHaveLength(TOTAL);

    // Every planned delivery ends sent and arrived; rate-limited submissions planned skipped ones.
    const expectedSent = TOTAL - IPS * (PER_IP - RATE_MAX);
    await hook.waitForDistinct(expectedSent, 60_000);
    await until(
      'no delivery left pending, sending or failed',
      async () => {
        for (const status of ['pending', 'sending', 'failed']) {
          const page = await http(server.base, 'GET', `/v1/deliveries?form_id=${formId}&status=${status}&limit=1`, key);
          if (page.json.data.length) return false;
        }
        return true;
      },
      30_000,
    );
    const deliveries = await listAll(server.base, key, `/v1/deliveries?form_id=${formId}`);
    expect(deliveries).toHaveLength(TOTAL);
    const sent = deliveries.filter((d) => d.status === 'sent');
    const skipped = deliveries.filter((d) => d.status === 'skipped');
    expect(sent).toHaveLength(expectedSent);
    expect(skipped).toHaveLength(TOTAL - expectedSent);
    const limited = new Set(ids.filter((_, i) => answers[i].status === 429));
    for (const d of skipped) {
      expect(d.skip_reason).toBe('quality');
      expect(limited.has(d.submission_id)).toBe(true);
    }

    const accepted = hook.accepted();
    const byId = new Map(deliveries.map((d) => [d.id, d]));
    for (const d of sent) expect(accepted.has(d.id), `delivery ${d.id} arrived`).toBe(true);
    for (const h of hook.hits) {
      // A resend is the same delivery: the Service-Delivery id, the body's id and its submission agree.
      expect(byId.get(h.id)?.status, `hit ${h.id} is a sent delivery`).toBe('sent');
      expect(h.body.id).toBe(h.id);
      expect(h.body.submission.id).toBe(byId.get(h.id)?.submission_id);
    }
    const duplicated = [...accepted].filter(([, hits]) => hits.length > 1);
    for (const [id, hits] of duplicated) {
      // Only a delivery in flight when the process died (sent, outcome not yet recorded) is sent
      // again, once, by the next process (which cannot send anything within a second of its
      // start: it boots and migrates first).
      expect(hits.length, id).toBe(2);
      expect(hits[0].receivedAt, id).toBeLessThanOrEqual(deadAt + 1000);
      expect(hits[1].receivedAt, id).toBeGreaterThanOrEqual(deadAt);
    }
    expect(duplicated.length).toBeLessThanOrEqual(IN_FLIGHT_MAX);
    console.log(
      `crash under load: ${TOTAL} posts in ${loadMs} ms (kill after ${KILL_AFTER} answers, ` +
        `${unanswered.reduce((a, b) => a + b, 0)} tries unanswered), ${sent.length} delivered, ` +
        `${duplicated.length} sent twice`,
    );
  });
});
