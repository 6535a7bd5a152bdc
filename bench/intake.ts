import { freePort, healthy } from '../test/helpers/process.js';
import type { CannonResult } from './cannon.js';
import { type BenchConfig, submissionBody } from './config.js';
import { runCannon } from './load.js';
import {
  type Cleanups,
  type CpuSpent,
  cpuMeter,
  progress,
  rssOf,
  rssSampler,
  sleep,
  spawnTs,
  stopChild,
  waitFor,
} from './proc.js';
import type { Receiver } from './receiver.js';
import { type Service, type Store, storedFor, type Tenant } from './service.js';
import { median } from './stats.js';

export interface Ctx {
  cfg: BenchConfig;
  store: Store;
  svc: Service | null;
  tenant: Tenant | null;
  receiver: Receiver;
  clean: Cleanups;
  /** problems worth a line in the report */
  notes: string[];
}

export interface RunRow {
  pair: number;
  target: 'service' | 'baseline';
  r: CannonResult;
  /** submissions stored with status received (service) or rows stored (baseline) */
  stored: number;
  /** answered 2xx "ok" but not found stored */
  lost: number;
  /** stored and answered 2xx "ok", per second of the run */
  rps: number;
  /** service: ms from the end of the load until every webhook expected so far arrived */
  settleMs: number | null;
  /** webhooks of earlier service runs still undelivered when this run started (the service's worker busy) */
  behindAtStart: number | null;
  rssMaxMb: number | null;
  /** CPU time spent during the load (not during the settle that follows it) */
  cpu: CpuSpent;
}

/** The match-and-unique variant of a pair's service run: server CPU per stored submission beside the plain form's. */
export interface VariantRow {
  pair: number;
  stored: number;
  rps: number;
  /** server CPU ms per stored submission: the variant's, and the plain run's of the same pair */
  cpuPer: number | null;
  plainCpuPer: number | null;
}

export interface IntakeResult {
  runs: RunRow[];
  ratios: number[];
  /** the variant runs (a route `match` and form `unique`); empty without the service */
  variants: VariantRow[];
  rssIdleMb: number | null;
  rssLoadMb: number | null;
}

/** The reference server in a child process of its own. */
async function startBaseline(ctx: Ctx) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const p = spawnTs('bench/baseline-server.ts', {
    ...ctx.store.baselineEnv,
    NODE_ENV: 'production',
    BASELINE_PORT: String(port),
  });
  const stop = () => stopChild(p, 5000);
  ctx.clean.add('stop baseline server', stop);
  const exited = p.exited.then(({ code, signal }) => {
    throw new Error(`baseline server exited during start-up (${code ?? signal}):\n${p.tail.text()}`);
  });
  exited.catch(() => {});
  await Promise.race([healthy(base), exited]);
  progress(`baseline server up (pid ${p.child.pid})`);
  return {
    base,
    pid: p.child.pid,
    stop,
    async count(formId: string): Promise<number> {
      const r = await fetch(`${base}/count/${formId}`, { signal: AbortSignal.timeout(60_000) });
      if (!r.ok) throw new Error(`baseline count: ${r.status}`);
      return Number(((await r.json()) as { stored: number }).stored);
    },
  };
}

/** A form and how many of its webhooks the receiver should get. */
export interface Expect {
  form: string;
  expected: number;
}

/** Webhooks still to arrive for the given forms. */
export function behind(ctx: Ctx, targets: Expect[]) {
  return targets.reduce((n, t) => n + Math.max(0, t.expected - ctx.receiver.distinct(t.form)), 0);
}

/**
 * Waits until every webhook expected for the given forms reached the receiver: ms waited, or null
 * (with a note) when the settle timeout passed first.
 */
export async function settle(ctx: Ctx, targets: Expect[], label: string): Promise<number | null> {
  const t0 = Date.now();
  const ok = await waitFor(() => {
    ctx.svc?.assertAlive();
    return behind(ctx, targets) === 0;
  }, ctx.cfg.settleTimeoutS * 1000);
  if (!ok) {
    const left = behind(ctx, targets);
    const all = targets.reduce((n, t) => n + t.expected, 0);
    ctx.notes.push(
      `${label}: ${left} of ${all} webhooks expected so far had not arrived ${ctx.cfg.settleTimeoutS} s after the load; went on`,
    );
    return null;
  }
  return Date.now() - t0;
}

function accepted(r: CannonResult) {
  return r.ok2xx - r.notOk;
}

const indent = (text: string) =>
  text
    .split('\n')
    .slice(-12)
    .map((l) => `    ${l.slice(0, 400)}`)
    .join('\n');

export function describeErrors(label: string, r: CannonResult, ctx: Ctx) {
  const parts: string[] = [];
  if (r.non2xx) {
    const codes = Object.entries(r.statusCodes)
      .filter(([c]) => !c.startsWith('2'))
      .map(([c, n]) => `${n}×${c}`)
      .join(', ');
    parts.push(`${r.non2xx} non-2xx answers (${codes})`);
  }
  if (r.notOk) parts.push(`${r.notOk} 2xx answers without "ok":true (stored as quarantined/spam)`);
  if (r.errors) parts.push(`${r.errors} connection errors (${r.timeouts} timeouts)`);
  if (!parts.length) return;
  if (r.sample) parts.push(`first such answer: ${r.sample}`);
  const log = ctx.svc?.output();
  if (log && !label.startsWith('baseline')) parts.push(`service output so far (last lines):\n${indent(log)}`);
  ctx.notes.push(`${label}: ${parts.join('; ')}`);
}

/**
 * CPU (ms per IDLE_WINDOW_MS) below which the service counts as idle (5 % of a core), and PostgreSQL's
 * processes with it (10 %). The window is longer than the service's timers that start after-work
 * (its search indexer ticks every second), so a pause between a run's deliveries and the work that
 * follows them does not count as idle.
 */
const IDLE_WINDOW_MS = 1500;
const IDLE_SERVICE_MS = 0.05 * IDLE_WINDOW_MS;
const IDLE_POSTGRES_MS = 0.1 * IDLE_WINDOW_MS;

/**
 * Waits (up to 60 s) until no autovacuum worker runs on the PostgreSQL server and the service has
 * finished the work an earlier run left it (delivering is waited for already; this covers work done
 * after the fact, such as writing the search text of the run's submissions): neither target's run
 * shares the machine with the other's leftovers. Idle means the service's processes used under 5 %
 * of a core, and PostgreSQL's under 10 %, over 1.5 s. Then vacuums and checkpoints (tidy).
 */
async function quiet(ctx: Ctx, label: string) {
  const t0 = Date.now();
  const sql = ctx.store.sql;
  const vacuuming = async () =>
    sql
      ? Number(
          (
            await sql<
              { n: number }[]
            >`select count(*)::int as n from pg_stat_activity where backend_type = 'autovacuum worker'`
          )[0].n,
        )
      : 0;
  const svc = ctx.svc;
  const serviceIdle = async () => {
    if (!svc) return true;
    const meter = cpuMeter(() => svc.pids(), sql !== null);
    await sleep(IDLE_WINDOW_MS);
    const cpu = meter.stop();
    return (cpu.server ?? 0) < IDLE_SERVICE_MS && (cpu.postgres ?? 0) < IDLE_POSTGRES_MS;
  };
  const done = await waitFor(async () => (await vacuuming()) === 0 && (await serviceIdle()), 60_000, 0);
  // Then the database is tidied, so that every run starts from the same state: a vacuum, so that
  // autovacuum finds nothing left by the runs before (the service's search text rewrites its rows)
  // to start on halfway through this one; a checkpoint, so that none meets one of PostgreSQL's own
  // (every 5 min or 1 GB of WAL) and each pays the same full-page writes for the pages it touches first.
  if (sql) await tidy(ctx, sql, label);
  const s = (Date.now() - t0) / 1000;
  if (s < 3 && done) return;
  ctx.notes.push(
    done
      ? `${label}: waited ${s.toFixed(1)} s for autovacuum and the service's after-work to finish first`
      : `${label}: the service or PostgreSQL still busy after ${s.toFixed(1)} s; ran anyway`,
  );
}

async function tidy(ctx: Ctx, sql: NonNullable<Ctx['store']['sql']>, label: string) {
  try {
    await sql`vacuum`;
    await sql`checkpoint`;
  } catch (err) {
    // Only a superuser (or pg_checkpoint) may checkpoint; the run goes on without it.
    ctx.notes.push(
      `${label}: no vacuum and checkpoint before the run (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

/** What the variant's form has: `unique` on the email (varied per post) and a route condition that matches. */
const VARIANT_RULES = {
  settings: { unique: { fields: ['email'] } },
  match: { $and: [{ 'data.topic': 'pricing' }, { 'data.consent': true }, { 'data.message': { $contains: 'team' } }] },
};

const cpuPer = (cpu: CpuSpent, stored: number) => (cpu.server !== null && stored > 0 ? cpu.server / stored : null);

/**
 * Right after a pair's plain service run, the same load on a form with `unique` (each post a fresh
 * address, so every one is received and claims) and a `match` on its route: the cost of the two
 * features per stored submission, in the same service, the same run, next to the plain form's.
 */
async function variantRun(ctx: Ctx, pair: number, plain: RunRow, expects: Expect[]): Promise<VariantRow> {
  const { cfg } = ctx;
  const svc = ctx.svc as Service;
  const tenant = ctx.tenant as Tenant;
  const form = await tenant.form(`bench match+unique ${pair}`, VARIANT_RULES);
  await quiet(ctx, `match+unique run ${pair}`);
  progress(`pair ${pair}/${cfg.pairs}: service, match + unique ${cfg.durationS} s`);
  const meter = cpuMeter(() => svc.pids(), ctx.store.kind === 'postgres');
  const r = await runCannon({
    url: `${svc.base}/s/${form}`,
    body: submissionBody({ email: 'person-[<id>]@example.com' }),
    connections: cfg.connections,
    duration: cfg.durationS,
    idReplacement: true,
    ...(cfg.intakeRate ? { rate: cfg.intakeRate } : {}),
  });
  const cpu = meter.stop();
  describeErrors(`match+unique run ${pair}`, r, ctx);
  const stored = await storedFor(ctx.store, svc, tenant.key, form);
  if (cfg.intakeWorker) {
    expects.push({ form, expected: stored.received });
    await settle(ctx, expects, `match+unique run ${pair}`);
  }
  return {
    pair,
    stored: stored.received,
    rps: Math.min(accepted(r), stored.received) / r.durationS,
    cpuPer: cpuPer(cpu, stored.received),
    plainCpuPer: cpuPer(plain.cpu, plain.stored),
  };
}

export async function intakePhase(ctx: Ctx): Promise<IntakeResult> {
  const { cfg } = ctx;
  const withService = cfg.parts.has('intake');
  const withBaseline = cfg.parts.has('baseline');
  const baseline = withBaseline ? await startBaseline(ctx) : null;
  const svc = withService ? ctx.svc! : null;
  const tenant = withService ? ctx.tenant! : null;
  const body = cfg.sameBody ? submissionBody() : submissionBody({}, '[<id>]');
  const job = (url: string, duration: number, rate?: number | null) => ({
    url,
    body,
    connections: cfg.connections,
    duration,
    idReplacement: !cfg.sameBody,
    ...(rate ? { rate } : {}),
  });
  /** every service form so far and the webhooks it should produce */
  const expects: Expect[] = [];

  // Warm-up: the same load, on a form (or baseline key) of its own; then let the webhooks drain.
  if (cfg.warmupS > 0) {
    if (svc && tenant) {
      const form = await tenant.form('bench warm-up');
      progress(`service warm-up ${cfg.warmupS} s`);
      const r = await runCannon(job(`${svc.base}/s/${form}`, cfg.warmupS));
      describeErrors('service warm-up', r, ctx);
      const stored = await storedFor(ctx.store, svc, tenant.key, form);
      if (cfg.intakeWorker) {
        expects.push({ form, expected: stored.received });
        await settle(ctx, expects, 'service warm-up');
      }
    }
    if (baseline) {
      progress(`baseline warm-up ${cfg.warmupS} s`);
      describeErrors('baseline warm-up', await runCannon(job(`${baseline.base}/s/warmup`, cfg.warmupS)), ctx);
    }
  }
  let rssIdleMb: number | null = null;
  if (svc) {
    await sleep(2000);
    rssIdleMb = rssOf(svc.pids());
  }

  const runs: RunRow[] = [];
  const ratios: number[] = [];
  const variants: VariantRow[] = [];
  for (let pair = 1; pair <= cfg.pairs; pair += 1) {
    let serviceRps: number | null = null;
    if (svc && tenant) {
      const form = await tenant.form(`bench run ${pair}`);
      const behindAtStart = behind(ctx, expects);
      if (behindAtStart) {
        ctx.notes.push(
          `service run ${pair} started with ${behindAtStart} webhooks of earlier runs still due ` +
            '(its worker delivered them during the run)',
        );
      }
      await quiet(ctx, `service run ${pair}`);
      progress(`pair ${pair}/${cfg.pairs}: service ${cfg.durationS} s`);
      const sampler = rssSampler(() => svc.pids());
      const meter = cpuMeter(() => svc.pids(), ctx.store.kind === 'postgres');
      const r = await runCannon(job(`${svc.base}/s/${form}`, cfg.durationS, cfg.intakeRate));
      const cpu = meter.stop();
      const rssMaxMb = sampler.stop();
      svc.assertAlive();
      describeErrors(`service run ${pair}`, r, ctx);
      const stored = await storedFor(ctx.store, svc, tenant.key, form);
      const ok = accepted(r);
      const lost = Math.max(0, ok - stored.received);
      if (lost) {
        ctx.notes.push(
          `service run ${pair}: ${ok} answered 2xx "ok" but only ${stored.received} stored as received ` +
            `(${stored.total} stored in all, checked via ${stored.via}); the rate counts the stored ones only`,
        );
      }
      const rps = Math.min(ok, stored.received) / r.durationS;
      let settleMs: number | null = null;
      if (cfg.intakeWorker) {
        expects.push({ form, expected: stored.received });
        settleMs = await settle(ctx, expects, `service run ${pair}`);
      }
      runs.push({
        pair,
        target: 'service',
        r,
        stored: stored.received,
        lost,
        rps,
        settleMs,
        behindAtStart,
        rssMaxMb,
        cpu,
      });
      serviceRps = rps;
      if (cfg.intakeVariant) variants.push(await variantRun(ctx, pair, runs[runs.length - 1], expects));
    }
    if (baseline) {
      const key = `run-${pair}`;
      const behindAtStart = svc ? behind(ctx, expects) : null;
      if (behindAtStart) {
        ctx.notes.push(
          `baseline run ${pair} shared the CPUs with the service delivering ${behindAtStart} webhooks still due: ` +
            "its rate (and this pair's ratio) is understated",
        );
      }
      await quiet(ctx, `baseline run ${pair}`);
      progress(`pair ${pair}/${cfg.pairs}: baseline ${cfg.durationS} s`);
      const meter = cpuMeter(() => (baseline.pid ? [baseline.pid] : []), ctx.store.kind === 'postgres');
      const r = await runCannon(job(`${baseline.base}/s/${key}`, cfg.durationS, cfg.intakeRate));
      const cpu = meter.stop();
      describeErrors(`baseline run ${pair}`, r, ctx);
      const stored = await baseline.count(key);
      const ok = accepted(r);
      const lost = Math.max(0, ok - stored);
      if (lost) ctx.notes.push(`baseline run ${pair}: ${ok} answered 2xx but only ${stored} stored`);
      const rps = Math.min(ok, stored) / r.durationS;
      runs.push({
        pair,
        target: 'baseline',
        r,
        stored,
        lost,
        rps,
        settleMs: null,
        behindAtStart,
        rssMaxMb: null,
        cpu,
      });
      if (serviceRps !== null && rps > 0) ratios.push(serviceRps / rps);
    }
  }
  await baseline?.stop();
  const loads = runs.map((x) => x.rssMaxMb).filter((v): v is number => v !== null);
  return { runs, ratios, variants, rssIdleMb, rssLoadMb: loads.length ? Math.max(...loads) : null };
}

export function intakeFigures(res: IntakeResult) {
  const svc = res.runs.filter((r) => r.target === 'service');
  const base = res.runs.filter((r) => r.target === 'baseline');
  return {
    intake_rps: svc.length ? median(svc.map((r) => r.rps)) : null,
    intake_p50_ms: svc.length ? median(svc.map((r) => r.r.p50)) : null,
    intake_p99_ms: svc.length ? median(svc.map((r) => r.r.p99)) : null,
    baseline_rps: base.length ? median(base.map((r) => r.rps)) : null,
    intake_vs_baseline: res.ratios.length ? median(res.ratios) : null,
    intake_match_unique_cpu_ratio: variantRatio(res.variants),
  };
}

/** Median over the pairs of (variant CPU per stored submission) / (plain CPU per stored submission). */
function variantRatio(rows: VariantRow[]): number | null {
  const ratios = rows
    .filter((v) => v.cpuPer !== null && v.plainCpuPer !== null && v.plainCpuPer > 0)
    .map((v) => (v.cpuPer as number) / (v.plainCpuPer as number));
  return ratios.length ? median(ratios) : null;
}
