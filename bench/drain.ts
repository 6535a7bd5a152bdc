import { submissionBody } from './config.js';
import { type Ctx, describeErrors } from './intake.js';
import { runCannon } from './load.js';
import { nowMs, progress, waitFor } from './proc.js';
import { storedFor } from './service.js';

export interface DrainResult {
  backlog: number;
  /** POSTs answered 2xx "ok" while the worker was off */
  accepted: number;
  /** submissions stored as received, i.e. pending deliveries expected */
  expected: number;
  /** distinct deliveries that reached the receiver */
  delivered: number;
  complete: boolean;
  /** first to last expected delivery at the receiver */
  firstToLastMs: number | null;
  /** process spawn to last delivery */
  startToLastMs: number | null;
  /** process spawn to /healthz answering */
  startToHealthyMs: number;
  /** process spawn to first delivery */
  startToFirstMs: number | null;
  dps: number | null;
}

/**
 * Backlog drain: the service, started with WORKER=false on a fresh store, takes `backlog`
 * submissions (one pending webhook delivery each), stops, and starts again with the worker on the
 * same database / DATA_DIR; the receiver times the first to the last of those deliveries.
 */
export async function drainPhase(ctx: Ctx): Promise<DrainResult> {
  const { cfg, receiver } = ctx;
  const svc = ctx.svc!;
  const tenant = ctx.tenant!;
  const form = await tenant.form('bench drain');
  progress(`drain: submitting ${cfg.backlog}`);
  const r = await runCannon({
    url: `${svc.base}/s/${form}`,
    body: cfg.sameBody ? submissionBody() : submissionBody({}, '[<id>]'),
    idReplacement: !cfg.sameBody,
    connections: cfg.connections,
    amount: cfg.backlog,
  });
  const accepted = r.ok2xx - r.notOk;
  const stored = await storedFor(ctx.store, svc, tenant.key, form);
  if (accepted !== cfg.backlog) ctx.notes.push(`drain: of ${cfg.backlog} POSTs ${accepted} were answered 2xx "ok"`);
  describeErrors('drain submissions', r, ctx);
  if (stored.received !== cfg.backlog) {
    ctx.notes.push(
      `drain: ${stored.received} submissions stored as received (via ${stored.via}), not ${cfg.backlog}; ` +
        `the drain waits for ${stored.received}`,
    );
  }
  const expected = stored.received;
  const early = receiver.distinct(form);
  if (early) ctx.notes.push(`drain: ${early} deliveries arrived while the worker was off`);

  await svc.stop();
  progress(`drain: starting with WORKER=true, waiting for ${expected} deliveries (at most ${cfg.drainTimeoutS} s)`);
  const { spawnedAt, healthyAt } = await svc.start(true);
  const complete = await waitFor(
    () => {
      svc.assertAlive();
      return receiver.distinct(form) >= expected;
    },
    cfg.drainTimeoutS * 1000,
    20,
  );
  const arrivals = receiver.of(form).arrivals;
  const delivered = arrivals.length;
  const base = {
    backlog: cfg.backlog,
    accepted,
    expected,
    delivered,
    complete,
    startToHealthyMs: healthyAt - spawnedAt,
    startToFirstMs: delivered ? arrivals[0] - spawnedAt : null,
  };
  if (complete) {
    const first = arrivals[0];
    const last = arrivals[expected - 1];
    return {
      ...base,
      firstToLastMs: last - first,
      startToLastMs: last - spawnedAt,
      // expected − 1 intervals between the first and the last arrival
      dps: last > first ? (expected - 1) / ((last - first) / 1000) : null,
    };
  }
  const deadline = nowMs();
  ctx.notes.push(
    `drain INCOMPLETE: only ${delivered} of ${expected} deliveries arrived within ${cfg.drainTimeoutS} s of the ` +
      `restart; drain_dps is what arrived per second from the first arrival to the deadline (a lower bound)`,
  );
  return {
    ...base,
    firstToLastMs: null,
    startToLastMs: null,
    dps: delivered ? delivered / ((deadline - arrivals[0]) / 1000) : 0,
  };
}
