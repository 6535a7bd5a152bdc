import { Pool } from 'undici';
import type { startSmtpSink } from '../test/helpers/smtp.js';
import { type BenchConfig, submissionBody } from './config.js';
import { postSubmission } from './load.js';
import { type Cleanups, nowMs, progress, sleep } from './proc.js';
import { bootService, type Root } from './service.js';
import { fmt, median, percentile, table } from './stats.js';

type Smtp = Awaited<ReturnType<typeof startSmtpSink>>;

/** Answers per block: each block's medians are paired across the sides, in time order. */
const BLOCK = 100;

export interface AbSide {
  name: string;
  /** the checkout whose `npm start` serves this side; empty: this one */
  dir: string;
}

export interface AbResult {
  rate: number;
  seconds: number;
  sides: { name: string; dir: string; answers: number[] }[];
}

/**
 * The intake's answer time of several checkouts, measured together: every side runs its own
 * service (its own database and worker) at once, and one sender posts to them in turn, each side at
 * BENCH_E2E_RATE, the side that goes first changing every cycle. A slow minute of the machine then
 * lands on every side alike, which separate runs cannot give: the e2e part's answer time moves by
 * 8 % or more between two runs of the same build on these machines (docs/performance.md).
 */
export async function abPhase(
  cfg: BenchConfig,
  root: Root,
  smtp: Smtp,
  hookUrl: string,
  clean: Cleanups,
): Promise<AbResult> {
  if (cfg.abSides.length < 2) {
    throw new Error(
      'BENCH_ONLY=ab needs BENCH_AB with two sides or more: name=dir,name=dir (an empty dir: this checkout)',
    );
  }
  const targets: { side: AbSide; url: URL; pool: Pool; answers: number[] }[] = [];
  for (const side of cfg.abSides) {
    // an empty dir is this checkout, whatever BENCH_SERVICE_DIR says
    const { tenant, svc } = await bootService(
      root,
      `ab_${side.name}`,
      smtp,
      hookUrl,
      clean,
      true,
      {},
      side.dir || null,
    );
    const url = new URL(`${svc.base}/s/${await tenant.form(`bench ab ${side.name}`)}`);
    const pool = new Pool(url.origin, { connections: 8, keepAliveTimeout: 30_000 });
    clean.add(`close pool (${side.name})`, () => pool.close());
    targets.push({ side, url, pool, answers: [] });
  }
  let seq = 0;
  const post = async (t: (typeof targets)[number], record: boolean) => {
    seq += 1;
    const sentAt = nowMs();
    const { status, text } = await postSubmission(
      t.pool,
      t.url.pathname,
      submissionBody({ seq, sent_at: sentAt }, `ab${seq}`),
    );
    if (status !== 200 || !text.includes('"ok":true')) {
      throw new Error(`ab ${t.side.name}: ${status} ${text.slice(0, 300)}`);
    }
    if (record) t.answers.push(nowMs() - sentAt);
  };
  const gapMs = 1000 / (cfg.e2eRate * targets.length);
  const run = async (seconds: number, record: boolean) => {
    const count = Math.round(seconds * cfg.e2eRate) * targets.length;
    const start = nowMs();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < count; i += 1) {
      const wait = start + i * gapMs - nowMs();
      if (wait > 1) await sleep(wait);
      const cycle = Math.floor(i / targets.length);
      inflight.push(post(targets[(i + cycle) % targets.length], record));
    }
    await Promise.all(inflight);
  };
  if (cfg.warmupS > 0) {
    progress(`ab warm-up ${cfg.warmupS} s, ${targets.length} sides at ${cfg.e2eRate}/s each`);
    await run(cfg.warmupS, false);
  }
  progress(`ab: ${targets.length} sides at ${cfg.e2eRate}/s each for ${cfg.e2eS} s, in turn`);
  await run(cfg.e2eS, true);
  return {
    rate: cfg.e2eRate,
    seconds: cfg.e2eS,
    sides: targets.map((t) => ({ name: t.side.name, dir: t.side.dir || '(this checkout)', answers: t.answers })),
  };
}

/** Block medians of one side's answers, in time order. */
function blocks(answers: number[]): number[] {
  const out: number[] = [];
  for (let b = 0; b + BLOCK <= answers.length; b += BLOCK) out.push(median(answers.slice(b, b + BLOCK)));
  return out;
}

export function abReport(r: AbResult) {
  const [first, ...rest] = r.sides;
  const firstBlocks = blocks(first.answers);
  const lines = [
    '',
    `Answer time of the sides together (ms; every side at ${r.rate}/s for ${r.seconds} s, posted in turn)`,
    table(
      ['side', 'checkout', 'answers', 'p25', 'p50', 'p75', 'p99'],
      r.sides.map((s) => [
        s.name,
        s.dir,
        s.answers.length,
        fmt(percentile(s.answers, 25)),
        fmt(median(s.answers)),
        fmt(percentile(s.answers, 75)),
        fmt(percentile(s.answers, 99)),
      ]),
    ),
  ];
  const figures: [string, number | null][] = r.sides.map((s) => [`ab_${s.name}_answer_p50_ms`, median(s.answers)]);
  for (const s of rest) {
    const other = blocks(s.answers);
    const n = Math.min(firstBlocks.length, other.length);
    const ratios = Array.from({ length: n }, (_, i) => firstBlocks[i] / other[i]);
    const overall = median(first.answers) / median(s.answers);
    lines.push(
      `${first.name} / ${s.name}: p50 ${fmt(overall, 3)}; the medians of ${n} blocks of ${BLOCK} answers, paired in time order: ` +
        `${n ? fmt(median(ratios), 3) : '—'} (${n ? `${fmt(Math.min(...ratios), 3)} to ${fmt(Math.max(...ratios), 3)}` : 'no block'})`,
    );
    figures.push([`ab_${first.name}_over_${s.name}`, overall]);
  }
  return { lines, figures };
}
