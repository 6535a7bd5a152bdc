import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { until } from '../test/helpers/receiver.js';
import { pool } from './helpers/load.js';
import { startFaultReceiver } from './helpers/receiver.js';
import { cleanups, databaseAndMail, listAll, serverProcess, tenant } from './helpers/service.js';

const SLOW_MS = 10_000;
/** The server's default sends per destination at once. */
const PER_DESTINATION = 4;
const BOTH = 8;
const FAST_ONLY = 20;

describe('a slow receiver', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('does not hold up deliveries to other destinations', async () => {
    const { db, smtp } = await databaseAndMail(c, 'slow');
    const slow = await startFaultReceiver(() => ({ status: 200, delayMs: SLOW_MS }));
    c.add(() => slow.close());
    const fast = await startFaultReceiver();
    c.add(() => fast.close());
    const server = await serverProcess(smtp, { DATABASE_URL: db.url, WEBHOOK_TIMEOUT_MS: '20000' });
    c.add(() => server.stop());
    await server.start();
    // One form routed to both receivers, and another routed only to the fast one.
    const both = await tenant(server.base, smtp, [slow.url, fast.url]);
    const other = await tenant(server.base, smtp, [fast.url]);

    const posts = await pool(BOTH, 4, (i) => http(server.base, 'POST', `/s/${both.formId}`, undefined, { n: i }));
    await slow.waitForHits(PER_DESTINATION, 10_000);
    const more = await pool(FAST_ONLY, 4, (i) => http(server.base, 'POST', `/s/${other.formId}`, undefined, { n: i }));
    expect([...posts, ...more].map((p) => p.status)).toEqual([...posts, ...more].map(() => 200));

    // Every fast delivery arrives while the first slow ones are still held open by their receiver.
    await fast.waitForDistinct(BOTH + FAST_ONLY, SLOW_MS);
    const fastDone = Math.max(...fast.hits.map((h) => h.answeredAt ?? Number.POSITIVE_INFINITY));
    const firstSlowAnswer = Math.min(...slow.hits.map((h) => h.answeredAt ?? Number.POSITIVE_INFINITY));
    expect(fastDone).toBeLessThan(firstSlowAnswer);
    expect(slow.hits.every((h) => h.answeredAt === null)).toBe(true);
    // The slow destination has at most its share of sends in flight; the rest wait their turn.
    expect(slow.hits.length).toBe(PER_DESTINATION);

    // And the slow ones are all delivered in the end, a few at a time.
    await slow.waitForDistinct(BOTH, 3 * SLOW_MS + 15_000);
    let inFlight = 0;
    let most = 0;
    for (const [, d] of slow.hits
      .flatMap((h) => [[h.receivedAt, 1] as const, [h.answeredAt ?? 0, -1] as const])
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
      inFlight += d;
      most = Math.max(most, inFlight);
    }
    expect(most).toBeLessThanOrEqual(PER_DESTINATION);
    await until(
      'every delivery sent',
      async () => {
        const ds = [
          ...(await listAll(server.base, both.key, `/v1/deliveries?form_id=${both.formId}`)),
          ...(await listAll(server.base, other.key, `/v1/deliveries?form_id=${other.formId}`)),
        ];
        return ds.length === 2 * BOTH + FAST_ONLY && ds.every((d) => d.status === 'sent');
      },
      10_000,
    );
    const firstAnswer = Math.min(...slow.hits.map((h) => h.answeredAt ?? Number.POSITIVE_INFINITY));
    console.log(
      `slow receiver: ${BOTH + FAST_ONLY} fast deliveries done ${firstAnswer - fastDone} ms before the first slow answer; ` +
        `at most ${most} slow sends at once`,
    );
  });
});
