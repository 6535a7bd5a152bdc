/**
 * The spam part: server CPU per stored submission on a plain form beside a form that uses every
 * spam signal with a trained model, in the same run, alternating. Both take the same ordinary
 * contact-form body (stored as received on both), so the difference is what the verdict costs.
 */

import type { Database } from '../server/db/client.js';
import type { BayesModel } from '../server/spam/bayes.js';
import { spamPolicyOf } from '../server/spam/policy.js';
import { textsOf, tokensOf } from '../server/spam/tokens.js';
import { counterKeysOf, recentVelocity, type Velocity } from '../server/spam/velocity.js';
import { spamFacts, spamVerdict } from '../server/spam/verdict.js';
import type { startSmtpSink } from '../test/helpers/smtp.js';
import type { BenchConfig } from './config.js';
import { submissionBody } from './config.js';
import { describeErrors } from './intake.js';
import { runCannon } from './load.js';
import { type Cleanups, cpuMeter, progress, sleep } from './proc.js';
import { bootService, type Root, setupTenant, storedFor } from './service.js';
import { generateCorpus } from './spam-corpus/corpus.js';
import { evaluate, type Send, splitCorpus } from './spam-corpus/evaluate.js';
import { fmt, median, table } from './stats.js';

type Smtp = Awaited<ReturnType<typeof startSmtpSink>>;

export interface SpamRun {
  pair: number;
  target: 'plain' | 'spam';
  stored: number;
  received: number;
  /** server CPU during the run, ms */
  cpuMs: number;
}

export interface SpamBenchResult {
  runs: SpamRun[];
  rate: number;
  marks: number;
  /** spamVerdict alone in this process, CPU µs per call: the plain form's policy, and every signal with the model */
  verdictUs: { plain: number; spam: number };
  /** the whole step on the plain form, run cold (caches swept first), wall µs per call: median, and the timing's own */
  coldUs: { step: number; empty: number };
}

/** The model the marks of our corpus's first `marks` training lines make, counted here as learn.ts counts them. */
function modelOf(marks: number): BayesModel {
  const tokens = new Map<string, [number, number]>();
  let spam = 0;
  let ham = 0;
  for (const line of splitCorpus(generateCorpus(), marks, 0).train) {
    const isSpam = line.class === 'spam';
    if (isSpam) spam += 1;
    else ham += 1;
    for (const t of tokensOf(textsOf({ name: line.name, email: line.email, message: line.message }))) {
      const c = tokens.get(t) ?? [0, 0];
      c[isSpam ? 0 : 1] += 1;
      tokens.set(t, c);
    }
  }
  return { spam, ham, tokens };
}

/** The verdict's own cost on the bench's body, in CPU µs per call (process.cpuUsage, steadier than wall time on a busy machine). */
function verdictMicro(): { plain: number; spam: number } {
  const data = JSON.parse(submissionBody()) as Record<string, unknown>;
  const base = { data, honeypotFilled: false, userAgent: 'bench', ip: '127.0.0.1', renderAgeS: 10 };
  const cases = {
    plain: () => spamVerdict({ ...base, model: null }, spamPolicyOf({}, {})),
    spam: (() => {
      const model = modelOf(MARKS);
      const policy = spamPolicyOf({ spam: EVERY_SIGNAL }, {});
      return () => spamVerdict({ ...base, model }, policy);
    })(),
  };
  const out = { plain: 0, spam: 0 };
  for (const [name, fn] of Object.entries(cases) as [keyof typeof out, () => unknown][]) {
    for (let i = 0; i < 20_000; i += 1) fn();
    const n = 100_000;
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i += 1) fn();
    const c = process.cpuUsage(c0);
    out[name] = (c.user + c.system) / n;
  }
  return out;
}

/**
 * The whole spam step as intake runs it on the plain form (the facts, the velocity keys and count,
 * the verdict), each call after a sweep of 64 MB that evicts the caches and the address
 * translations, as the other processes of a machine do between two requests at 50/s: the step's
 * cost on a request then is mostly the memory it reaches (code, tables, pages), not its loops
 * (docs/spam.md, "Measured again (2026-11-29, a sixth machine)"). Median wall µs over alternated
 * calls of the step and of an empty function (the timing's own cost).
 */
function stepCold(): { step: number; empty: number } {
  const policy = spamPolicyOf({}, {});
  // a stand-in for the server's database: PGlite's kind keeps the count in this process
  const database = { kind: 'pglite' } as Database;
  const bodies = Array.from({ length: 2000 }, (_, i) => submissionBody({ seq: i }, `cold${i}`));
  const step = (body: string) => {
    const data = JSON.parse(body) as Record<string, unknown>;
    const now = new Date();
    const t0 = process.hrtime.bigint();
    const facts = spamFacts(data);
    const velocity = recentVelocity(database, counterKeysOf('org_bench_cold', facts), now, 600);
    const v = spamVerdict(
      {
        data,
        facts,
        honeypotFilled: false,
        userAgent: 'bench',
        ip: '127.0.0.1',
        renderAgeS: null,
        model: null,
        velocity: velocity as Velocity | undefined,
      },
      policy,
    );
    const t = Number(process.hrtime.bigint() - t0) / 1000;
    return v.score >= 0 ? t : Number.NaN;
  };
  const empty = (body: string) => {
    const data = JSON.parse(body) as Record<string, unknown>;
    const t0 = process.hrtime.bigint();
    const t = Number(process.hrtime.bigint() - t0) / 1000;
    return data ? t : Number.NaN;
  };
  for (let i = 0; i < 20_000; i += 1) step(bodies[i % bodies.length]); // optimized, as in a running server
  const sweep = new Float64Array((64 << 20) / 8);
  const times = { step: [] as number[], empty: [] as number[] };
  for (let i = 0; i < 1000; i += 1) {
    for (const which of i % 2 ? (['step', 'empty'] as const) : (['empty', 'step'] as const)) {
      for (let k = i & 7; k < sweep.length; k += 8) sweep[k] += 1; // one write per cache line
      times[which].push((which === 'step' ? step : empty)(bodies[(i * 7) % bodies.length]));
    }
  }
  return { step: median(times.step), empty: median(times.empty) };
}

/** Requests per second of each run: below saturation, where CPU per submission means something. */
const DEFAULT_RATE = 150;
/** Marks that train the spam form's organization (through PATCH, as an owner would). */
const MARKS = 300;

/** Every list of `settings.spam`, with entries that never match the bench's body. */
const EVERY_SIGNAL = {
  min_seconds: 3,
  threshold: 0.8,
  block: {
    emails: ['spammer@spam.example', 'bulk@spam.example'],
    domains: ['spam.example', 'mailinator.com'],
    ips: ['192.0.2.0/24', '2001:db8:dead::/48', '198.51.100.77'],
    keywords: ['viagra', 'casino bonus', 'guaranteed backlinks', 'crypto doubler', 'payday loan'],
  },
  allow: {
    emails: ['owner@example.org'],
    domains: ['partner.example'],
    ips: ['203.0.113.250'],
    keywords: ['order reference zx-99'],
  },
};

function sender(base: string): Send {
  return async (method, path, headers, body) => {
    const res = await fetch(`${base}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };
}

/** A form in a new organization, trained with MARKS marks of our corpus, with every list set. */
async function spamForm(base: string, key: string): Promise<string> {
  const { train } = splitCorpus(generateCorpus(), MARKS, 0);
  // The evaluation's training half: posts through /s/{formId} and marks them; its form is then equipped.
  const trained = await evaluate({ send: sender(base), key, train, unseen: [], waitMs: 0, concurrency: 4 });
  const res = await fetch(`${base}/v1/forms/${trained.formId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    // Any origin again (the bench's load sends none), every list and a minimum time.
    body: JSON.stringify({ settings: { allowed_origins: [], spam: EVERY_SIGNAL } }),
  });
  if (res.status !== 200) throw new Error(`PATCH spam form: ${res.status} ${await res.text()}`);
  return trained.formId;
}

export async function spamPhase(cfg: BenchConfig, root: Root, smtp: Smtp, hookUrl: string, clean: Cleanups) {
  // Intake alone (no worker): the verdict is intake's cost, and neither form's deliveries weigh on the other.
  const { store, svc, tenant } = await bootService(root, 'spam', smtp, hookUrl, clean, false);
  const plain = await tenant.form('plain');
  progress(`spam: training a second organization with ${MARKS} marks`);
  const trainedOrg = await setupTenant(svc, smtp, hookUrl);
  const spam = await spamForm(svc.base, trainedOrg.key);
  // The model reaches intake within 2 s; the warm-up runs after that.
  await sleep(2500);
  const rate = cfg.intakeRate ?? DEFAULT_RATE;
  const body = submissionBody();
  const job = (form: string, duration: number) => ({
    url: `${svc.base}/s/${form}`,
    body,
    connections: 10,
    duration,
    rate,
  });
  const targets = [
    { target: 'plain' as const, form: plain, key: tenant.key },
    { target: 'spam' as const, form: spam, key: trainedOrg.key },
  ];
  const runs: SpamRun[] = [];
  const notes: string[] = [];
  // describeErrors reads only the service's output and the notes of its context.
  const ctx = { svc, notes } as unknown as Parameters<typeof describeErrors>[2];
  for (const t of targets) describeErrors(`spam warm-up (${t.target})`, await runCannon(job(t.form, 3)), ctx);
  for (let pair = 1; pair <= cfg.pairs; pair += 1) {
    // Alternating which goes first, so that neither always follows the other's after-work.
    for (const t of pair % 2 ? targets : [...targets].reverse()) {
      const before = await storedFor(store, svc, t.key, t.form);
      await sleep(1000);
      progress(`spam pair ${pair}/${cfg.pairs}: ${t.target} ${cfg.durationS} s at ${rate}/s`);
      const meter = cpuMeter(() => svc.pids(), false);
      const r = await runCannon(job(t.form, cfg.durationS));
      const cpu = meter.stop();
      describeErrors(`spam run ${pair} (${t.target})`, r, ctx);
      const after = await storedFor(store, svc, t.key, t.form);
      runs.push({
        pair,
        target: t.target,
        stored: after.total - before.total,
        received: after.received - before.received,
        cpuMs: cpu.server ?? Number.NaN,
      });
    }
  }
  await svc.stop();
  progress('spam: the verdict alone, in process, warm and cold');
  return {
    result: { runs, rate, marks: MARKS, verdictUs: verdictMicro(), coldUs: stepCold() } satisfies SpamBenchResult,
    notes,
  };
}

const perSubmissionUs = (r: SpamRun) => (r.stored ? (1000 * r.cpuMs) / r.stored : Number.NaN);

export function spamReport(res: SpamBenchResult) {
  const of = (target: SpamRun['target']) => median(res.runs.filter((r) => r.target === target).map(perSubmissionUs));
  const plain = of('plain');
  const spam = of('spam');
  const ratio = plain > 0 ? spam / plain : null;
  const lines = [
    '',
    `Spam verdict cost (server CPU per stored submission, µs; the same ordinary body at ${res.rate}/s to a plain ` +
      `form and to a form with every list, min_seconds and a model trained with ${res.marks} marks; alternating; ` +
      'intake alone, no worker)',
    table(
      ['pair', 'form', 'stored', 'received', 'server CPU ms', 'µs / submission'],
      res.runs.map((r) => [r.pair, r.target, r.stored, r.received, fmt(r.cpuMs, 0), fmt(perSubmissionUs(r), 0)]),
    ),
    `spam / plain (medians): ${fmt(ratio, 3)}`,
    `the verdict alone (spamVerdict in the bench process, CPU µs per call on the same body): plain form ` +
      `${fmt(res.verdictUs.plain, 1)}, every signal with the trained model ${fmt(res.verdictUs.spam, 1)}`,
    `the whole step cold (facts, velocity, verdict on the plain form, each call after a 64 MB sweep; wall µs, ` +
      `median): ${fmt(res.coldUs.step - res.coldUs.empty, 1)} (the timing alone ${fmt(res.coldUs.empty, 1)})`,
  ];
  const figures: [string, number | null][] = [
    ['spam_cpu_us_per_submission_plain', plain],
    ['spam_cpu_us_per_submission_spam', spam],
    ['spam_cpu_ratio', ratio],
    ['spam_verdict_us_plain', res.verdictUs.plain],
    ['spam_verdict_us_spam', res.verdictUs.spam],
    ['spam_step_cold_us', res.coldUs.step - res.coldUs.empty],
  ];
  return { lines, figures };
}
