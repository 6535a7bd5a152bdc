import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';

/**
 * Tenant regexes (JSON Schema `pattern` and `patternProperties`) run against whatever a visitor posts,
 * so none may hold the event loop: a pattern like `^(a+)+$` backtracks for hours on forty characters,
 * and even `a*b` takes seconds on a 256 KiB field. Every tenant pattern is tested one of two ways:
 *
 * - In this thread on V8's linear-time engine (the `l` flag), when the pattern has no construct that
 *   engine lacks (backreferences, lookaround) and means the same without the `u` flag (no `\p{…}`,
 *   `\u{…}` or astral characters) and the value holds no surrogate, so both readings agree.
 * - Otherwise in a worker thread, waited for synchronously with a time budget. A test that runs past
 *   its budget counts as not matching (the submission is still stored, as invalid), and the worker is
 *   replaced. A submission's tests share one budget, so no post holds the loop for long.
 */

/** Milliseconds one validation's worker-run pattern tests may take together (one test, outside one). */
export const PATTERN_BUDGET_MS = 50;
/** Extra wait for a worker that is still starting. */
const STARTUP_MS = 5_000;
const CACHE_SIZE = 1_000;

export interface PatternTest {
  test(s: string): boolean;
  toString(): string;
}

function enableLinearEngine(): boolean {
  try {
    setFlagsFromString('--enable-experimental-regexp-engine');
    // biome-ignore lint/complexity/useRegexLiterals: a literal with the l flag would not even parse without the flag
    new RegExp('a', 'l');
    return true;
  } catch {
    return false;
  }
}
const LINEAR = enableLinearEngine();

/** Constructs whose meaning differs between `u` and non-`u` regexes (on surrogate-free values). */
const UNICODE_ONLY = /\\[pP]\{|\\u\{|\\u[dD][89a-fA-F]|[\uD800-\uDFFF]/;
const SURROGATE = /[\uD800-\uDFFF]/;

// The worker: compiles each pattern once and answers through shared memory.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const ctl = workerData.ctl;
const compiled = new Map();
parentPort.on('message', (m) => {
  let re = compiled.get(m.key);
  if (!re) {
    if (compiled.size >= ${CACHE_SIZE}) compiled.clear();
    re = new RegExp(m.source, m.flags);
    compiled.set(m.key, re);
  }
  Atomics.store(ctl, 1, re.test(m.value) ? 1 : 0);
  Atomics.store(ctl, 0, m.seq);
  Atomics.notify(ctl, 0);
});
Atomics.store(ctl, 2, 1);
Atomics.notify(ctl, 0);
`;

interface Runner {
  worker: Worker;
  /** [last answered seq, its result, ready] */
  ctl: Int32Array;
  seq: number;
}

let runner: Runner | null = null;
/** Milliseconds left for worker tests in the current validation; null outside one. */
let budget: number | null = null;

function spawn(): Runner {
  const ctl = new Int32Array(new SharedArrayBuffer(12));
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ctl } });
  const r: Runner = { worker, ctl, seq: 0 };
  worker.unref();
  worker.on('error', () => {
    if (runner === r) runner = null;
  });
  worker.on('exit', () => {
    if (runner === r) runner = null;
  });
  return r;
}

/** Stops the worker if one runs (it is started again when needed). */
export async function stopPatternWorker(): Promise<void> {
  const r = runner;
  runner = null;
  if (r) await r.worker.terminate();
}

/** Runs fn with one budget for the worker-run pattern tests it makes. */
export function withPatternBudget<T>(ms: number, fn: () => T): T {
  const outer = budget;
  budget = ms;
  try {
    return fn();
  } finally {
    budget = outer;
  }
}

function testInWorker(key: string, source: string, flags: string, value: string): boolean {
  const left = budget ?? PATTERN_BUDGET_MS;
  if (left <= 0) return false;
  runner ??= spawn();
  const r = runner;
  const seq = ++r.seq;
  // A worker still starting gets time to start; the budget counts from when it is ready.
  const started = performance.now();
  r.worker.postMessage({ seq, key, source, flags, value });
  let readyAt = Atomics.load(r.ctl, 2) === 1 ? started : null;
  let answered = Atomics.load(r.ctl, 0);
  while (answered !== seq) {
    const now = performance.now();
    if (readyAt === null && Atomics.load(r.ctl, 2) === 1) readyAt = now;
    const deadline = readyAt === null ? started + STARTUP_MS : readyAt + left;
    if (now >= deadline) break;
    Atomics.wait(r.ctl, 0, answered, deadline - now);
    answered = Atomics.load(r.ctl, 0);
  }
  if (budget !== null) budget -= performance.now() - (readyAt ?? performance.now());
  if (answered !== seq) {
    // Past its budget: counts as no match, and the stuck worker goes.
    if (runner === r) runner = null;
    void r.worker.terminate();
    return false;
  }
  return Atomics.load(r.ctl, 1) === 1;
}

const cache = new Map<string, PatternTest>();

/**
 * A tenant pattern, compiled (a SyntaxError for one that does not compile, as `new RegExp` throws)
 * and guarded as above. Same shape as ajv's `code.regExp` engine.
 */
export function tenantPattern(source: string, flags = 'u'): PatternTest {
  const key = `/${source}/${flags}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const native = new RegExp(source, flags);
  let linear: RegExp | null = null;
  if (LINEAR && !/[gyims]/.test(flags) && !UNICODE_ONLY.test(source)) {
    try {
      linear = new RegExp(source, `${flags.replace('u', '')}l`);
    } catch {
      linear = null; // a construct the linear engine lacks: the worker tests it
    }
  }
  // A pattern the worker will test gets the worker started now, before the first value comes.
  if (!linear) runner ??= spawn();
  const guarded: PatternTest = {
    test: (s: string) =>
      linear && !SURROGATE.test(s) ? linear.test(s) : testInWorker(key, native.source, native.flags, s),
    toString: () => key,
  };
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  cache.set(key, guarded);
  return guarded;
}
/** For ajv's `code.regExp` option (the `code` property is only read by standalone code generation). */
export const tenantRegExpEngine = Object.assign((source: string, flags: string) => tenantPattern(source, flags), {
  code: 'tenantPattern',
});
