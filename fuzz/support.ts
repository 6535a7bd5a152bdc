import fc from 'fast-check';
import { expect } from 'vitest';
import { ERROR_CODES } from '../shared/errors.js';

/**
 * One seed for the whole process, printed by every property: FUZZ_SEED=<n> replays a run exactly
 * (the app state each property sees is rebuilt from the same seed). FUZZ_RUNS overrides the run
 * count of every property; FUZZ_PATH (with `-t <property>`) replays one counterexample path.
 */
export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const RUNS = process.env.FUZZ_RUNS ? Math.max(1, Number(process.env.FUZZ_RUNS)) : undefined;
const PATH = process.env.FUZZ_PATH || undefined;

if (!Number.isInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);

/** Status tally of one property, printed at its end so a run shows what it actually exercised. */
export class Tally {
  private counts = new Map<string, number>();
  requests = 0;
  add(label: string | number) {
    this.counts.set(String(label), (this.counts.get(String(label)) ?? 0) + 1);
  }
  toString() {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `${k}:${n}`)
      .join(' ');
  }
}

/** Runs one async property with the shared seed; logs `fuzz seed=<n> runs=<n>` and a summary. */
export async function fuzz<T>(
  name: string,
  defaultRuns: number,
  arb: fc.Arbitrary<T>,
  predicate: (value: T, tally: Tally) => Promise<void>,
) {
  const runs = RUNS ?? defaultRuns;
  const tally = new Tally();
  console.log(`fuzz seed=${SEED} runs=${runs} property="${name}"`);
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(arb, (v) => predicate(v, tally)),
    { seed: SEED, numRuns: runs, ...(PATH ? { path: PATH } : {}) },
  );
  const ms = Math.round(performance.now() - started);
  console.log(`fuzz done property="${name}" runs=${runs} requests=${tally.requests} ms=${ms} statuses: ${tally}`);
}

/**
 * Unhandled rejections and uncaught exceptions anywhere in the process fail the property that is
 * running (checked after every request) and the file (checked in afterAll).
 */
export function guardProcess() {
  const seen: string[] = [];
  const onRejection = (reason: unknown) => seen.push(`unhandledRejection: ${describe(reason)}`);
  const onException = (err: unknown) => seen.push(`uncaughtException: ${describe(err)}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    /** Fails with what was seen, once: the next property starts clean. */
    assertClean() {
      const report = seen.splice(0).join('\n\n');
      expect(report, 'no unhandled rejection or uncaught exception').toBe('');
    },
    dispose() {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
}

const describe = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e));

/**
 * Errors the app logs as unexpected failures (the ones answered 500), so a failing property names
 * the server-side cause next to its counterexample.
 */
export function captureServerErrors(deps: { log: unknown }): string[] {
  const seen: string[] = [];
  const log = deps.log as Record<string, unknown>;
  deps.log = new Proxy(log, {
    get(target, prop, receiver) {
      if (prop === 'error') return (obj: { err?: unknown }) => seen.push(describe(obj?.err ?? obj));
      return Reflect.get(target, prop, receiver);
    },
  });
  return seen;
}

/** The JSON of an answer that must have this status (setup steps, not the properties under test). */
export async function must(r: Answer, status: number, what: string) {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.json;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** Never 5xx; every answer that is not 2xx (or a 303 where allowed) is the error envelope. */
export function expectWellFormed(r: Answer, label: string, opts: { redirect?: boolean; serverErrors?: string[] } = {}) {
  const cause = r.status >= 500 ? `\nserver: ${opts.serverErrors?.at(-1) ?? '(nothing logged)'}` : '';
  const where = `${label} → ${r.status} ${r.text.slice(0, 500)}${cause}`;
  expect(r.status, where).toBeLessThan(500);
  expect(r.status, where).toBeGreaterThanOrEqual(200);
  if (r.status < 300) return;
  if (r.status === 303 && opts.redirect) {
    expect(r.headers.get('location'), where).toBeTruthy();
    return;
  }
  // A browser post (no JSON Accept) that was stored but refused gets a page, not the envelope:
  // 422 schema_violation, 403 origin_rejected, 429 rate_limited.
  if (opts.redirect && [403, 422, 429].includes(r.status) && /^text\/html/.test(r.headers.get('content-type') ?? '')) {
    expect(r.text, where).toMatch(/^<!doctype html>/i);
    return;
  }
  expectEnvelope(r, where);
}

export function expectEnvelope(r: Answer, where: string) {
  expect(r.headers.get('content-type') ?? '', where).toMatch(/^application\/json/);
  expect(r.json, where).toBeTypeOf('object');
  expect(Object.keys(r.json), where).toEqual(['error']);
  const e = r.json.error;
  expect(e, where).toBeTypeOf('object');
  expect(e.code, where).toBeTypeOf('string');
  expect(Object.hasOwn(ERROR_CODES, e.code), `${where}: code ${e.code} is in the closed list`).toBe(true);
  expect(e.message, where).toBeTypeOf('string');
  expect(e.message.length, where).toBeGreaterThan(0);
  if (e.hint !== undefined) expect(e.hint, where).toBeTypeOf('string');
  if (e.details !== undefined) expect(e.details, where).toBeTypeOf('object');
}
