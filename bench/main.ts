/**
 * npm run bench: intake throughput and latency against a one-statement reference server, end-to-end
 * webhook latency, backlog drain rate and memory of the service, measured on this machine.
 * Settings: see USAGE in config.ts (BENCH_ONLY, BENCH_DURATION_S, …; DATABASE_URL picks PostgreSQL).
 */
import os from 'node:os';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { type AbResult, abPhase, abReport } from './ab.js';
import { type AttachmentKindResult, attachmentsPhase, attachmentsReport } from './attachments.js';
import { type BenchConfig, loadBenchConfig, USAGE } from './config.js';
import { type DashboardResult, dashboardPhase, dashboardReport } from './dashboard.js';
import { type DataResult, dataPartWanted, dataPhase, dataReport } from './data.js';
import { type DrainResult, drainPhase } from './drain.js';
import { type E2eResult, e2ePhase } from './e2e.js';
import { type Ctx, type IntakeResult, intakeFigures, intakePhase } from './intake.js';
import { stopLoad } from './load.js';
import { type PowResult, powPhase, powReport } from './pow.js';
import { cleanups, progress } from './proc.js';
import { startReceiver } from './receiver.js';
import { bootService, openRoot, openStore, type Root } from './service.js';
import { type SpamBenchResult, spamPhase, spamReport } from './spam.js';
import { type StartResult, startPhase } from './start.js';
import { fmt, median, table } from './stats.js';

interface Results {
  start?: StartResult;
  intake?: IntakeResult;
  e2e?: E2eResult;
  drain?: DrainResult;
  data?: DataResult;
  dashboard?: DashboardResult;
  attachments?: AttachmentKindResult[];
  pow?: PowResult;
  ab?: AbResult;
  spam?: SpamBenchResult;
}

function header(cfg: BenchConfig, root: Root) {
  const cpus = os.cpus();
  const lines = [
    'formsvc bench',
    `database: ${root.kind} — ${root.describe}`,
    `node ${process.version}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? '?'}), ${os.platform()} ${os.arch()}, ` +
      `${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at start`,
    `parts: ${[...cfg.parts].join(', ')}`,
    'service: `npm start` (whatever it runs); its RSS and CPU are those of every process npm starts, npm aside',
  ];
  if (cfg.parts.has('intake') || cfg.parts.has('baseline')) {
    lines.push(
      `intake: POST /s/{formId}, ~300-byte JSON, ${cfg.connections} connections, ${cfg.pairs} × ${cfg.durationS} s ` +
        `per target after ${cfg.warmupS} s warm-up, autocannon in a child process; only 2xx "ok" answers whose ` +
        'submission is found stored count',
    );
  }
  if (cfg.parts.has('intake') && !cfg.intakeWorker) {
    lines.push('intake runs WITHOUT the worker (BENCH_INTAKE_WORKER=false): intake alone, nothing delivered');
  }
  if (cfg.parts.has('baseline')) {
    lines.push(
      root.kind === 'postgres'
        ? 'baseline: Hono + @hono/node-server + postgres.js (pool 10), one prepared statement with data-modifying ' +
            'CTEs storing submission + delivery + event rows'
        : 'baseline: Hono + @hono/node-server + PGlite in the baseline process itself (no server to connect to), ' +
            'one statement with data-modifying CTEs storing submission + delivery + event rows',
    );
  }
  return lines.join('\n');
}

function report(cfg: BenchConfig, root: Root, res: Results, notes: string[]) {
  const out: string[] = [];
  const figures: [string, number | null][] = [];
  if (res.start) {
    const s = res.start;
    const ms = (list: number[]) => list.map((v) => fmt(v, 0)).join(', ');
    out.push(
      '',
      `Start-up (ms, spawn of npm start → /healthz 200; the CLI is node bin/formsvc.js, spawn → exit, against the ${root.kind} service)`,
      table(
        ['what', 'runs', 'median'],
        [
          ['first start, empty PGlite DATA_DIR', fmt(s.firstStartMs, 0), fmt(s.firstStartMs, 0)],
          [`start on ${root.kind}, migrated`, ms(s.startRuns), fmt(s.startMs, 0)],
          ['formsvc --help', ms(s.cliHelpRuns), fmt(median(s.cliHelpRuns), 0)],
          ['formsvc whoami', ms(s.cliWhoamiRuns), fmt(median(s.cliWhoamiRuns), 0)],
        ],
      ),
      `processes of npm start ${cfg.bootWaitS} s after a start (MB RSS, npm aside): ${s.bootProcs || '—'}`,
    );
    figures.push(
      ['start_ms', s.startMs],
      ['first_start_ms', s.firstStartMs],
      ['cli_help_ms', median(s.cliHelpRuns)],
      ['cli_whoami_ms', median(s.cliWhoamiRuns)],
      ['rss_boot_mb', s.rssBootMb],
    );
  }
  if (res.intake) {
    const rows = res.intake.runs.map((x) => [
      x.pair,
      x.target,
      x.r.ok2xx - x.r.notOk,
      x.r.non2xx + x.r.notOk,
      x.r.errors,
      x.stored,
      x.lost,
      fmt(x.rps, 0),
      fmt(x.r.p50),
      fmt(x.r.p99),
      x.behindAtStart ?? '—',
      x.target === 'baseline' || !cfg.intakeWorker ? '—' : x.settleMs === null ? 'timeout' : fmt(x.settleMs / 1000, 1),
      fmt(x.rssMaxMb, 0),
    ]);
    out.push(
      '',
      'Intake runs (alternating; "hooks due at start": webhooks of earlier service runs not yet delivered when the run ' +
        'began; "hooks done after": seconds from the end of the load until all webhooks so far arrived)',
      table(
        [
          'pair',
          'target',
          '2xx ok',
          'rejected',
          'errors',
          'stored',
          'lost',
          'req/s',
          'p50 ms',
          'p99 ms',
          'hooks due at start',
          'hooks done after s',
          'RSS max MB',
        ],
        rows,
      ),
    );
    out.push(
      '',
      'CPU time during the intake runs, ms per stored submission (from /proc; "bench" is this process, which runs ' +
        'the webhook receiver; "postgres" is every PostgreSQL process of the machine; "server sys" is the part of ' +
        '"server" spent in the kernel, "syscalls" the server\'s read and write system calls per stored submission)',
      table(
        ['pair', 'target', 'server', 'server sys', 'syscalls', 'postgres', 'bench', 'all'],
        res.intake.runs.map((x) => {
          const per = (ms: number | null) => (ms === null || !x.stored ? null : ms / x.stored);
          const all = [x.cpu.server, x.cpu.postgres, x.cpu.bench].reduce<number>((a, b) => a + (b ?? 0), 0);
          const cell = (ms: number | null) => fmt(per(ms), 3);
          return [
            x.pair,
            x.target,
            cell(x.cpu.server),
            cell(x.cpu.serverSys),
            fmt(per(x.cpu.serverSyscalls), 2),
            cell(x.cpu.postgres),
            cell(x.cpu.bench),
            cell(all),
          ];
        }),
      ),
    );
    if (res.intake.ratios.length)
      out.push(`service / baseline per pair: ${res.intake.ratios.map((r) => fmt(r, 3)).join(', ')}`);
    const f = intakeFigures(res.intake);
    if (cfg.parts.has('intake')) {
      figures.push(
        ['intake_rps', f.intake_rps],
        ['intake_p50_ms', f.intake_p50_ms],
        ['intake_p99_ms', f.intake_p99_ms],
      );
    }
    if (cfg.parts.has('baseline')) figures.push(['baseline_rps', f.baseline_rps]);
    if (f.intake_vs_baseline !== null) figures.push(['intake_vs_baseline', f.intake_vs_baseline]);
    if (f.intake_match_unique_cpu_ratio !== null) {
      figures.push(['intake_match_unique_cpu_ratio', f.intake_match_unique_cpu_ratio]);
      out.push(
        `match + unique / plain, server CPU per stored submission per pair: ${res.intake.variants
          .map((v) => (v.cpuPer !== null && v.plainCpuPer ? fmt(v.cpuPer / v.plainCpuPer, 3) : '—'))
          .join(', ')} (${res.intake.variants.map((v) => `${fmt(v.rps)} req/s`).join(', ')})`,
      );
    }
  }
  if (res.e2e) {
    const e = res.e2e;
    out.push(
      '',
      `End to end (submit → webhook received), ${e.rate} req/s for ${e.seconds} s`,
      table(
        ['sent', 'accepted', 'delivered', 'rejected', 'errors', 'p50 ms', 'p99 ms', 'max ms', 'answer p50 ms'],
        [
          [
            e.sent,
            e.accepted,
            e.delivered,
            e.non2xx + e.notOk,
            e.errors,
            fmt(e.p50),
            fmt(e.p99),
            fmt(e.max),
            fmt(e.answerP50),
          ],
        ],
      ),
      '("answer p50": the intake\'s answer to the same requests, the part of the end to end before the worker)',
    );
    figures.push(['e2e_p50_ms', e.p50], ['e2e_p99_ms', e.p99], ['e2e_answer_p50_ms', e.answerP50]);
  }
  if (res.drain) {
    const d = res.drain;
    const s = (ms: number | null) => (ms === null ? '—' : fmt(ms / 1000, 2));
    out.push(
      '',
      `Backlog drain (${d.backlog} submissions taken with WORKER=false, then restarted with WORKER=true)`,
      table(
        [
          'accepted',
          'pending',
          'delivered',
          'start→healthy s',
          'start→first s',
          'first→last s',
          'start→last s',
          'deliveries/s',
        ],
        [
          [
            d.accepted,
            d.expected,
            d.delivered,
            s(d.startToHealthyMs),
            s(d.startToFirstMs),
            s(d.firstToLastMs),
            s(d.startToLastMs),
            fmt(d.dps, 0),
          ],
        ],
      ),
    );
    if (!d.complete)
      out.push(`NOT ALL DELIVERIES ARRIVED: ${d.delivered} of ${d.expected} within ${cfg.drainTimeoutS} s`);
    figures.push(['drain_dps', d.dps]);
  }
  if (res.intake && cfg.parts.has('intake')) {
    figures.push(['rss_idle_mb', res.intake.rssIdleMb], ['rss_load_mb', res.intake.rssLoadMb]);
  }
  if (res.dashboard) {
    const d = dashboardReport(res.dashboard);
    out.push(...d.lines);
    figures.push(...d.figures);
  }
  if (res.attachments) {
    const d = attachmentsReport(res.attachments);
    out.push(...d.lines);
    figures.push(...d.figures);
  }
  if (res.spam) {
    const d = spamReport(res.spam);
    out.push(...d.lines);
    figures.push(...d.figures);
  }
  if (res.data) {
    const d = dataReport(res.data);
    out.push(...d.lines);
    figures.push(...d.figures);
  }
  if (res.pow) {
    const d = powReport(res.pow);
    out.push(...d.lines);
    figures.push(...d.figures);
  }
  if (res.ab) {
    const d = abReport(res.ab);
    out.push(...d.lines);
    figures.push(...d.figures);
  }
  if (notes.length) out.push('', 'Notes', ...notes.map((n) => `- ${n}`));
  const named = figures.map(
    ([n, v]) =>
      [
        n,
        v === null
          ? 'NaN'
          : fmt(
              v,
              n === 'intake_vs_baseline' ||
                n === 'spam_cpu_ratio' ||
                n === 'intake_match_unique_cpu_ratio' ||
                n.includes('_over_')
                ? 3
                : 2,
            ),
      ] as const,
  );
  out.push(
    '',
    'Summary',
    table(
      ['figure', 'value'],
      named.map(([n, v]) => [n, v]),
    ),
    '',
  );
  out.push(`db=${root.kind}`, ...named.map(([n, v]) => `${n}=${v}`));
  return out.join('\n');
}

async function main() {
  if (process.argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const cfg = loadBenchConfig();
  const clean = cleanups();
  let interrupted = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${sig}: cleaning up\n`);
    void stopLoad()
      .then(() => clean.run())
      .finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const root = await openRoot(cfg, clean);
    process.stdout.write(`${header(cfg, root)}\n`);
    const receiver = await startReceiver();
    clean.add('close receiver', () => receiver.close());
    const notes: string[] = [];
    const smtp = await startSmtpSink();
    clean.add('close SMTP sink', () => smtp.close());
    /** Each part on a service and store of its own: one part's delivery backlog never reaches the next. */
    const part = async (name: string, worker = true): Promise<Ctx> => {
      const { store, svc, tenant } = await bootService(root, name, smtp, receiver.url, clean, worker);
      return { cfg, store, svc, tenant, receiver, clean, notes };
    };
    const res: Results = {};
    if (cfg.parts.has('start')) res.start = await startPhase(cfg, root, smtp, receiver.url, clean);
    if (cfg.parts.has('intake') || cfg.parts.has('baseline')) {
      const ctx: Ctx = cfg.parts.has('intake')
        ? await part('intake', cfg.intakeWorker)
        : { cfg, store: await openStore(root, 'intake', clean), svc: null, tenant: null, receiver, clean, notes };
      res.intake = await intakePhase(ctx);
      await ctx.svc?.stop();
    }
    if (cfg.parts.has('e2e')) {
      const ctx = await part('e2e');
      res.e2e = await e2ePhase(ctx);
      await ctx.svc?.stop();
    }
    if (cfg.parts.has('drain')) {
      const ctx = await part('drain', false);
      res.drain = await drainPhase(ctx);
      await ctx.svc?.stop();
    }
    if (cfg.parts.has('dashboard')) res.dashboard = await dashboardPhase(root, smtp, receiver.url, clean);
    if (cfg.parts.has('attachments')) res.attachments = await attachmentsPhase(root, smtp, receiver.url, clean);
    if (cfg.parts.has('pow')) res.pow = await powPhase();
    if (cfg.parts.has('ab')) res.ab = await abPhase(cfg, root, smtp, receiver.url, clean);
    if (cfg.parts.has('spam')) {
      const spam = await spamPhase(cfg, root, smtp, receiver.url, clean);
      res.spam = spam.result;
      notes.push(...spam.notes);
    }
    if (dataPartWanted()) res.data = await dataPhase(cfg, root, smtp, clean);
    const stats = receiver.stats();
    if (stats.unparsed) notes.push(`receiver: ${stats.unparsed} of ${stats.total} webhook bodies were not understood`);
    process.stdout.write(`${report(cfg, root, res, notes)}\n`);
  } catch (err) {
    process.exitCode = 1;
    process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
  } finally {
    await stopLoad();
    progress('cleaning up');
    await clean.run();
  }
}

void main();
