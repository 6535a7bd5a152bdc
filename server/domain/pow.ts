import crypto from 'node:crypto';
import { type Challenge, createChallenge, randomInt, type Solution, solveChallenge, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { sql } from 'drizzle-orm';
import type { Config } from '../config.js';
import type { Database, Db } from '../db/client.js';
import { powSpent } from '../db/schema.js';
import type { Verdict } from './checks.js';
import { serverKey } from './file-links.js';

/**
 * The proof-of-work challenge (settings.challenge {provider: "pow"}), in the ALTCHA v2 format: the
 * server signs a challenge whose answer is a counter it picked at random; the visitor's browser
 * (the `altcha` widget, or altcha-lib's solveChallenge) tries counters from 0 up until one derives
 * the key whose prefix the challenge names. Each try is one PBKDF2-SHA-256 of POW_COST iterations,
 * so `difficulty` (the average counter) is the average number of tries. The challenge also carries
 * an HMAC of the expected key (keySignature): verifying costs two HMACs, not a derivation.
 */
export const POW_ALGORITHM = 'PBKDF2/SHA-256';
/** PBKDF2 iterations of one try: large enough that the widget's per-try overhead does not count. */
export const POW_COST = 1000;
/** The average number of tries: about half a second of a phone's CPU with the widget's workers (docs/spam.md). */
export const POW_DEFAULT_DIFFICULTY = 1000;
export const POW_MAX_DIFFICULTY = 100_000;
/** The form field the widget posts its payload in (its default name), and the header that may carry it instead. */
export const POW_FIELD = 'altcha';
export const POW_HEADER = 'x-altcha';

const KEY_NAME = 'pow_challenge';

interface PowSecrets {
  signature: string;
  key: string;
}

const secrets = new WeakMap<Database, Promise<PowSecrets>>();

/**
 * The two HMAC secrets altcha-lib signs with, derived from one server key (`server_secrets`), so
 * every process of a deployment issues and verifies alike.
 */
export function powSecrets(database: Database): Promise<PowSecrets> {
  let known = secrets.get(database);
  if (!known) {
    known = serverKey(database, KEY_NAME).then((key) => ({
      signature: crypto.createHmac('sha256', key).update('altcha challenge signature').digest('hex'),
      key: crypto.createHmac('sha256', key).update('altcha derived key signature').digest('hex'),
    }));
    known.catch(() => secrets.delete(database));
    secrets.set(database, known);
  }
  return known;
}

/** A form's difficulty: its setting when valid, else the default. */
export function powDifficulty(challenge: unknown): number {
  const d = challenge && typeof challenge === 'object' && 'difficulty' in challenge ? challenge.difficulty : undefined;
  return typeof d === 'number' && Number.isInteger(d) && d >= 1 && d <= POW_MAX_DIFFICULTY ? d : POW_DEFAULT_DIFFICULTY;
}

/** Whether a form's settings.challenge asks for proof of work. */
export function asksForPow(challenge: unknown): boolean {
  return !!challenge && typeof challenge === 'object' && 'provider' in challenge && challenge.provider === 'pow';
}

/**
 * A new signed challenge for one form, expiring CHALLENGE_EXPIRES_S after `now`. The counter is
 * drawn between half and one and a half times the difficulty; the form's id travels in its signed
 * data, so a solution is good for that form only.
 */
export async function issuePowChallenge(
  deps: { database: Database; config: Pick<Config, 'challengeExpiresS'> },
  formId: string,
  difficulty: number,
  now: Date,
): Promise<Challenge> {
  const keys = await powSecrets(deps.database);
  return createChallenge({
    algorithm: POW_ALGORITHM,
    cost: POW_COST,
    counter: randomInt(Math.ceil(difficulty * 1.5), Math.max(1, Math.floor(difficulty / 2))),
    deriveKey,
    data: { form: formId },
    expiresAt: new Date(now.getTime() + deps.config.challengeExpiresS * 1000),
    hmacSignatureSecret: keys.signature,
    hmacKeySignatureSecret: keys.key,
  });
}

/**
 * A solved payload for the service's own test submission (the dashboard's "Send a test
 * submission", made by a signed-in member): a challenge of difficulty 1, so the server spends a
 * millisecond, not a visitor's half second.
 */
export async function selfSolvedPow(
  deps: { database: Database; config: Pick<Config, 'challengeExpiresS'> },
  formId: string,
  now: Date,
): Promise<string> {
  const challenge = await issuePowChallenge(deps, formId, 1, now);
  const solution = await solveChallenge({ challenge, deriveKey, timeout: 10_000 });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

/** A solution that verified, to be spent in the submission's transaction. */
export interface PowSpend {
  signature: string;
  expiresAt: Date;
}

export type PowCheck = { ok: true; spend: PowSpend } | { ok: false; error: string };

/** The widget's payload: base64 of JSON {challenge, solution}; plain JSON is taken too. */
function decodePayload(payload: string): { challenge: Challenge; solution: Solution } | null {
  try {
    const text = payload.trimStart().startsWith('{') ? payload : Buffer.from(payload, 'base64').toString('utf8');
    const v = JSON.parse(text) as { challenge?: Challenge; solution?: Solution };
    const c = v?.challenge;
    if (!c || typeof c !== 'object' || !c.parameters || typeof c.parameters !== 'object') return null;
    if (typeof c.signature !== 'string' || !v.solution || typeof v.solution !== 'object') return null;
    return { challenge: c, solution: v.solution };
  } catch {
    return null;
  }
}

/**
 * Verifies a payload locally (no outside call): signed by this server, for this form, not expired,
 * and solved. Whether it was used before is the spend's business (spendPow).
 */
export async function checkPow(database: Database, formId: string, payload: string | undefined): Promise<PowCheck> {
  if (!payload) return { ok: false, error: 'no altcha solution' };
  if (payload.length > 4096) return { ok: false, error: 'altcha payload too long' };
  const decoded = decodePayload(payload);
  if (!decoded) return { ok: false, error: 'altcha payload unreadable' };
  const { parameters, signature } = decoded.challenge;
  if (parameters.data?.form !== formId) return { ok: false, error: 'challenge of another form' };
  if (typeof parameters.expiresAt !== 'number') return { ok: false, error: 'challenge without expiry' };
  const keys = await powSecrets(database);
  try {
    const result = await verifySolution({
      challenge: decoded.challenge,
      solution: decoded.solution,
      deriveKey,
      hmacSignatureSecret: keys.signature,
      hmacKeySignatureSecret: keys.key,
    });
    if (result.expired) return { ok: false, error: 'challenge expired' };
    if (!result.verified) return { ok: false, error: result.invalidSignature ? 'bad signature' : 'wrong solution' };
  } catch (err) {
    return { ok: false, error: `unverifiable: ${(err as Error).message}` };
  }
  return { ok: true, spend: { signature: String(signature), expiresAt: new Date(parameters.expiresAt * 1000) } };
}

/**
 * Marks a solution used, in the caller's transaction: false when it already was (a replay), in
 * this process or another. A rolled-back submission leaves it unspent.
 */
export async function spendPow(tx: Db, spend: PowSpend): Promise<boolean> {
  const rows = await tx
    .insert(powSpent)
    .values({ signature: spend.signature, expiresAt: spend.expiresAt })
    .onConflictDoNothing()
    .returning({ signature: powSpent.signature });
  return rows.length > 0;
}

export const CHALLENGE_FAILED: Verdict = { status: 'quarantined', reason: 'challenge_failed' };

/**
 * The verdict under the lock once the solution is spent: a replay fails the challenge, except that
 * a rate-limited flood stays rate_limited whatever it sent.
 */
export async function spendThen<T extends { verdict: Verdict; issues: unknown[] | null }>(
  tx: Db,
  spend: PowSpend | undefined,
  locked: T,
): Promise<T> {
  if (!spend || locked.verdict.reason === 'rate_limited') return locked;
  if (await spendPow(tx, spend)) return locked;
  return { ...locked, verdict: CHALLENGE_FAILED, issues: null };
}

/** Housekeeping: forgets spent solutions whose challenges expired (a replay then fails as expired). */
export async function deleteExpiredPowSpent(deps: { database: Database; now: () => Date }, batch = 5000) {
  const gone = await deps.database.rows(sql`
    delete from pow_spent where signature in (
      select signature from pow_spent where expires_at < ${deps.now().toISOString()} limit ${batch}
    )
    returning 1`);
  return { deleted: gone.length };
}
