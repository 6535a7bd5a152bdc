import { Pool } from 'undici';
import type { CannonJob, CannonResult } from './cannon.js';
import { BROWSER_UA } from './config.js';
import { type Child, killChild, nowMs, sleep, spawnTs } from './proc.js';

/** The autocannon child in flight, so that a failure elsewhere can end it. */
let current: Child | null = null;

export async function stopLoad() {
  if (current) await killChild(current);
}

/** One autocannon run in a child process of its own; resolves with its result. */
export async function runCannon(job: CannonJob): Promise<CannonResult> {
  const c = spawnTs('bench/cannon.ts', { BENCH_CANNON: JSON.stringify(job) }, { keepStdout: true });
  current = c;
  try {
    const { code, signal } = await c.exited;
    const line = c
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop();
    if (code !== 0 || !line) {
      throw new Error(`autocannon child failed (${code ?? signal}):\n${c.tail.text()}`);
    }
    return JSON.parse(line) as CannonResult;
  } finally {
    current = null;
  }
}

/**
 * One submission POSTed as a site's script posts it (JSON, a browser's User-Agent): its status and
 * its whole body, read before this resolves, so a time taken after it covers the whole answer.
 */
export async function postSubmission(
  pool: Pool,
  path: string,
  body: string,
): Promise<{ status: number; text: string }> {
  const res = await pool.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': BROWSER_UA },
    body,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

export interface PacedResult {
  sent: number;
  /** sequence numbers answered 2xx with "ok":true */
  accepted: Set<number>;
  non2xx: number;
  notOk: number;
  errors: number;
  /** how far behind schedule the sender fell at worst (ms): large values mean the rate was not held */
  maxLagMs: number;
  /** the first answer that was not 2xx "ok" (status and body, cut), or the first error */
  sample: string | null;
  /** ms from handing each accepted request to the pool to its whole answer read */
  answerMs: number[];
}

/**
 * A steady stream of POSTs: request i leaves at start + i/rate, whether or not earlier ones were
 * answered (no coordinated omission). Each body carries its sequence number and `sent_at`, the
 * nowMs() at the moment it is handed to the connection pool.
 */
export async function paced(
  url: string,
  rate: number,
  seconds: number,
  body: (extra: Record<string, unknown>) => string,
): Promise<PacedResult> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 32, keepAliveTimeout: 30_000 });
  const count = Math.round(rate * seconds);
  const out: PacedResult = {
    sent: 0,
    accepted: new Set(),
    non2xx: 0,
    notOk: 0,
    errors: 0,
    maxLagMs: 0,
    sample: null,
    answerMs: [],
  };
  const inflight: Promise<void>[] = [];
  const start = nowMs();
  try {
    for (let seq = 0; seq < count; seq += 1) {
      const due = start + (seq * 1000) / rate;
      const wait = due - nowMs();
      if (wait > 1) await sleep(wait);
      const sentAt = nowMs();
      out.maxLagMs = Math.max(out.maxLagMs, sentAt - due);
      out.sent += 1;
      inflight.push(
        postSubmission(pool, u.pathname, body({ seq, sent_at: sentAt }))
          .then(({ status, text }) => {
            const ok2xx = status >= 200 && status < 300;
            if (ok2xx && text.includes('"ok":true')) {
              out.answerMs.push(nowMs() - sentAt);
              out.accepted.add(seq);
              return;
            }
            if (ok2xx) out.notOk += 1;
            else out.non2xx += 1;
            out.sample ??= `${status} ${text.slice(0, 400)}`;
          })
          .catch((err: Error) => {
            out.errors += 1;
            out.sample ??= String(err.message);
          }),
      );
    }
    await Promise.all(inflight);
  } finally {
    await pool.close().catch(() => {});
  }
  return out;
}
