import { afterAll, describe, expect, it } from 'vitest';
import { http } from '../test/helpers/process.js';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { pool, type Reply, send, sleep, submissionIdOf } from './helpers/load.js';
import { cleanups, serverProcess, tenant } from './helpers/service.js';

const TOTAL = 300;
const KILL_AFTER = 120;

describe('kill -9 of a server on embedded PGlite mid-load', () => {
  const c = cleanups();
  afterAll(() => c.run());

  it('keeps every acknowledged submission across the restart', { timeout: 150_000 }, async () => {
    const smtp = await startSmtpSink();
    c.add(() => smtp.close());
    // No DATABASE_URL: embedded PGlite in the process's DATA_DIR, kept across the restart.
    const server = await serverProcess(smtp, {});
    c.add(() => server.stop());
    await server.start();
    const { key, formId } = await tenant(server.base, smtp, []);

    let answered = 0;
    let restart: Promise<void> | null = null;
    const replies: Reply[] = await pool(TOTAL, 10, async (i) => {
      for (;;) {
        const r = await send(`${server.base}/s/${formId}`, {
          json: { n: i },
          headers: { 'idempotency-key': `pglite-${i}`, 'x-forwarded-for': `198.51.100.${(i % 50) + 1}` },
          timeoutMs: 15_000,
        });
        if (r.status !== 0) {
          answered += 1;
          if (answered === KILL_AFTER) restart = server.kill().then(() => server.start());
          return r;
        }
        await sleep(200);
      }
    });
    await restart;
    // Every post was answered in the end, each naming its stored submission (200, or 429 past a limit).
    expect(replies.filter((r) => r.status !== 200 && r.status !== 429)).toEqual([]);
    const ids = replies.map(submissionIdOf) as string[];
    expect(new Set(ids).size).toBe(TOTAL);
    const looked = await pool(ids.length, 10, (i) => http(server.base, 'GET', `/v1/submissions/${ids[i]}`, key));
    expect(looked.map((l) => l.status)).toEqual(ids.map(() => 200));
    console.log(`pglite kill: ${TOTAL} posts, killed after ${KILL_AFTER} answers, every acked one stored`);
  });
});
