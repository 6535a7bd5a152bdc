/**
 * Child-process entry point: one autocannon run, so that the load generator never shares an event
 * loop with the server or the webhook receiver. Reads the job from BENCH_CANNON (JSON), writes one
 * JSON line with the result on stdout.
 */
import autocannon from 'autocannon';
import { BROWSER_UA } from './config.js';

export interface CannonJob {
  url: string;
  body: string;
  connections: number;
  /** seconds; ignored when amount is set */
  duration?: number;
  /** a fixed number of requests instead of a duration */
  amount?: number;
  /** requests per second over all connections; unset: as fast as the server answers */
  rate?: number;
  /** autocannon puts a fresh id in place of each `[<id>]` of the body (a value unique per post) */
  idReplacement?: boolean;
}

export interface CannonResult {
  ok2xx: number;
  /** 2xx answers whose body did not say "ok":true (stored as quarantined or spam) */
  notOk: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  durationS: number;
  /** latency of the 2xx answers only */
  p50: number;
  p99: number;
  mean: number;
  /** the first answer body that did not say "ok":true (an error envelope, usually), cut to 400 chars */
  sample: string | null;
}

async function run() {
  const job = JSON.parse(process.env.BENCH_CANNON ?? '') as CannonJob;
  let sample: string | null = null;
  const r = await autocannon({
    url: job.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': BROWSER_UA },
    body: job.body,
    connections: job.connections,
    ...(job.amount ? { amount: job.amount } : { duration: job.duration ?? 10 }),
    ...(job.rate ? { overallRate: job.rate } : {}),
    ...(job.idReplacement ? { idReplacement: true } : {}),
    timeout: 30,
    // Non-2xx answers are errors, not accepted submissions: keep them out of the latency figures.
    excludeErrorStats: true,
    verifyBody: (body) => {
      const ok = body.includes('"ok":true');
      if (!ok && sample === null) sample = body.slice(0, 400);
      return ok;
    },
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(s.count);
  const out: CannonResult = {
    ok2xx: r['2xx'],
    // autocannon checks every body, error answers too (which never say "ok":true).
    notOk: Math.max(0, r.mismatches - r.non2xx),
    non2xx: r.non2xx,
    statusCodes,
    errors: r.errors,
    timeouts: r.timeouts,
    durationS: r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.average,
    sample,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

run().catch((err) => {
  process.stderr.write(`cannon: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
