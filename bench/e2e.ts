import { submissionBody } from './config.js';
import { type Ctx, settle } from './intake.js';
import { paced } from './load.js';
import { nowMs, progress, waitFor } from './proc.js';
import { storedFor } from './service.js';
import { percentile } from './stats.js';

export interface E2eResult {
  rate: number;
  seconds: number;
  sent: number;
  accepted: number;
  /** accepted submissions whose webhook arrived */
  delivered: number;
  non2xx: number;
  notOk: number;
  errors: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  /** worst lateness of the sender against its schedule (ms) */
  maxLagMs: number;
  /** the median time to the intake's answer (ms): the part of the end to end before the worker */
  answerP50: number | null;
}

/** How long to wait, after the last send, for the last webhooks. */
const TAIL_WAIT_MS = 60_000;

/**
 * Submit-to-webhook latency at a steady rate: every body carries `seq` and `sent_at` (taken when
 * the request is handed to the connection pool); the receiver subtracts `data.sent_at` of the
 * webhook payload from its arrival time. Sender and receiver run in this process, on one clock.
 */
export async function e2ePhase(ctx: Ctx): Promise<E2eResult> {
  const { cfg, receiver } = ctx;
  const svc = ctx.svc!;
  const tenant = ctx.tenant!;
  // One person per request, and not the warm-up's people again (seq starts at 0 in both runs): a
  // person seen twice in the velocity window costs the intake a read of the other nodes' sightings.
  const bodyOf = (run: string) => (extra: Record<string, unknown>) =>
    submissionBody(extra, cfg.sameBody ? undefined : `${run}${extra.seq}`);
  const body = bodyOf('e');
  if (cfg.warmupS > 0) {
    const warm = await tenant.form('bench e2e warm-up');
    progress(`e2e warm-up ${cfg.warmupS} s at ${cfg.e2eRate}/s`);
    const w = await paced(`${svc.base}/s/${warm}`, cfg.e2eRate, cfg.warmupS, bodyOf('w'));
    await settle(ctx, [{ form: warm, expected: w.accepted.size }], 'e2e warm-up');
  }
  const form = await tenant.form('bench e2e');
  progress(`e2e: ${cfg.e2eRate} req/s for ${cfg.e2eS} s`);
  const res = await paced(`${svc.base}/s/${form}`, cfg.e2eRate, cfg.e2eS, body);
  svc.assertAlive();
  const tally = receiver.of(form);
  const arrived = () => [...res.accepted].filter((seq) => tally.latency.has(seq)).length;
  const tailStart = nowMs();
  await waitFor(() => tally.latency.size >= res.accepted.size && arrived() >= res.accepted.size, TAIL_WAIT_MS, 50);
  const latencies = [...res.accepted].map((seq) => tally.latency.get(seq)).filter((v): v is number => v !== undefined);

  const stored = await storedFor(ctx.store, svc, tenant.key, form);
  if (stored.received < res.accepted.size) {
    ctx.notes.push(
      `e2e: ${res.accepted.size} answered 2xx "ok" but only ${stored.received} stored as received (via ${stored.via})`,
    );
  }
  if (latencies.length < res.accepted.size) {
    ctx.notes.push(
      `e2e: ${res.accepted.size - latencies.length} of ${res.accepted.size} accepted submissions had no webhook ` +
        `${Math.round((nowMs() - tailStart) / 1000)} s after the last send; percentiles cover the ${latencies.length} that arrived`,
    );
  }
  if (res.non2xx || res.notOk || res.errors) {
    ctx.notes.push(
      `e2e: ${res.non2xx} non-2xx answers, ${res.notOk} 2xx without "ok":true, ${res.errors} errors; ` +
        `first: ${res.sample}`,
    );
  }
  if (res.maxLagMs > 100) {
    ctx.notes.push(`e2e: the sender fell up to ${Math.round(res.maxLagMs)} ms behind its schedule`);
  }
  return {
    rate: cfg.e2eRate,
    seconds: cfg.e2eS,
    sent: res.sent,
    accepted: res.accepted.size,
    delivered: latencies.length,
    non2xx: res.non2xx,
    notOk: res.notOk,
    errors: res.errors,
    p50: latencies.length ? percentile(latencies, 50) : null,
    p99: latencies.length ? percentile(latencies, 99) : null,
    max: latencies.length ? Math.max(...latencies) : null,
    maxLagMs: res.maxLagMs,
    answerP50: res.answerMs.length ? percentile(res.answerMs, 50) : null,
  };
}
