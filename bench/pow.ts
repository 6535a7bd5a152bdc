import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { openPglite } from '../server/db/client.js';
import { checkPow, issuePowChallenge, POW_COST, POW_DEFAULT_DIFFICULTY } from '../server/domain/pow.js';
import { fmt, median, table } from './stats.js';

/** Verifications timed for pow_verify_us, after a warm-up; challenges solved for the solve time. */
const VERIFY_RUNS = 2000;
const SOLVES = 5;

export interface PowResult {
  verifyUs: number;
  issueUs: number;
  solveMs: number[];
  tries: number[];
}

/**
 * The proof-of-work challenge, in process on an embedded database: what formsvc spends to issue a
 * challenge and to verify one solution (two HMACs, no derivation: pow_verify_us), and how long one
 * Node.js thread takes to solve one at the default difficulty (a browser's widget solves with
 * several workers at once; docs/spam.md).
 */
export async function powPhase(): Promise<PowResult> {
  const database = await openPglite(null);
  try {
    const deps = { database, config: { challengeExpiresS: 600 } };
    const formId = 'fm_bench';
    const issued: number[] = [];
    const solveMs: number[] = [];
    const tries: number[] = [];
    let payload = '';
    for (let i = 0; i < SOLVES; i++) {
      const t0 = performance.now();
      const challenge = await issuePowChallenge(deps, formId, POW_DEFAULT_DIFFICULTY, new Date());
      issued.push((performance.now() - t0) * 1000);
      const t1 = performance.now();
      const solution = await solveChallenge({ challenge, deriveKey });
      solveMs.push(performance.now() - t1);
      tries.push((solution?.counter ?? 0) + 1);
      payload = Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
    }
    const verify: number[] = [];
    for (let i = 0; i < VERIFY_RUNS + 200; i++) {
      const t0 = performance.now();
      const check = await checkPow(database, formId, payload);
      const us = (performance.now() - t0) * 1000;
      if (!check.ok) throw new Error(`pow bench: a valid solution did not verify (${check.error})`);
      if (i >= 200) verify.push(us);
    }
    return { verifyUs: median(verify), issueUs: median(issued), solveMs, tries };
  } finally {
    await database.close();
  }
}

export function powReport(p: PowResult) {
  const lines = [
    '',
    `Proof of work (in process; PBKDF2-SHA-256 of ${POW_COST} iterations a try, default difficulty ${POW_DEFAULT_DIFFICULTY} ` +
      `tries on average; verify: median of ${VERIFY_RUNS} verifications of one valid payload; solve: one Node.js thread)`,
    table(
      ['what', 'value'],
      [
        ['verify one solution (µs, median)', fmt(p.verifyUs, 1)],
        ['issue one challenge (µs, median)', fmt(p.issueUs, 0)],
        ['solve at the default difficulty (ms, each)', p.solveMs.map((v) => fmt(v, 0)).join(', ')],
        ['tries it took (each)', p.tries.join(', ')],
        ['solve (ms, median)', fmt(median(p.solveMs), 0)],
      ],
    ),
  ];
  const figures: [string, number | null][] = [
    ['pow_verify_us', p.verifyUs],
    ['pow_solve_ms', median(p.solveMs)],
  ];
  return { lines, figures };
}
