import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { type SpamFacts, spamFacts, VELOCITY_LIMIT } from './verdict.js';

/**
 * Velocity: how many recent submissions across an organization's forms carry the same text, or
 * come from the same address. Each submission stores two hashes (columns `spam_fingerprint`,
 * `spam_address`), and intake counts the matches of the window with one capped query, only when
 * the submission has something to count (docs/spam.md, "Velocity").
 */
export interface VelocityKeys {
  /** a hash of the submission's long text values (20+ characters, addresses left out), or null */
  fingerprint: string | null;
  /** a hash of its first email address, or null */
  address: string | null;
}

export const NO_VELOCITY_KEYS: VelocityKeys = { fingerprint: null, address: null };
/** A value shorter than this is a name, a choice or a subject line: too common to count. */
export const MIN_FINGERPRINT_CHARS = 20;

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The first 16 bytes of a SHA-256, base64url (22 characters). Salted by the organization: the same
 * address hashes differently in each, and the column holds no address. Read off the digest's own
 * base64url text (a quarter of the cost of cutting a Buffer): 21 characters carry 126 bits, and the
 * 22nd keeps the two bits left of byte 16 with the rest zero, as encoding the 16 bytes alone gives.
 */
export function fingerprintHash(orgId: string, kind: string, value: string): string {
  const full = crypto.hash('sha256', `${orgId}\n${kind}\n${value}`, 'base64url');
  return full.slice(0, 21) + B64URL[B64URL.indexOf(full[21]) & 0b110000];
}

const SPACE_RUN = /\s\s|[\t\n\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** The same text however it is spaced or capitalized (the common text, single spaces only, skips the replace). */
function normalize(s: string): string {
  const lower = s.toLowerCase();
  return (SPACE_RUN.test(lower) ? lower.replace(/\s+/g, ' ') : lower).trim();
}

/** The velocity keys of a submission's data. */
export function velocityKeys(orgId: string, data: Record<string, unknown>): VelocityKeys {
  return velocityKeysOf(orgId, spamFacts(data));
}

/** The velocity keys of a submission's texts and addresses (intake's spam verdict reads the same ones). */
export function velocityKeysOf(orgId: string, { texts, emails }: SpamFacts): VelocityKeys {
  const long: string[] = [];
  for (const text of texts) {
    // Normalizing never lengthens a text: a short one is left out before it costs anything.
    if (text.length < MIN_FINGERPRINT_CHARS) continue;
    const t = normalize(text);
    if (t.length >= MIN_FINGERPRINT_CHARS && !emails.includes(t)) long.push(t);
  }
  long.sort();
  return {
    fingerprint: long.length ? fingerprintHash(orgId, 'text', long.join('\n')) : null,
    address: emails.length ? fingerprintHash(orgId, 'address', emails[0]) : null,
  };
}

export interface Velocity {
  sameContent: number;
  sameAddress: number;
}

/**
 * The organization's submissions since `since` with the same fingerprint and with the same address,
 * this one included (it is not stored yet), each capped at VELOCITY_LIMIT. On PGlite (one process
 * per database, by its lock) a counter in this process answers, with no read; on PostgreSQL, where
 * several nodes share the database, one capped query (see countStored). `record` is false when the
 * same submission is decided again (a stale entry's retry), so it counts once. A promise only when
 * it reads: the in-process answer comes back as it is, so intake's common case awaits nothing.
 */
export function recentVelocity(
  database: Database,
  orgId: string,
  keys: VelocityKeys,
  now: Date,
  windowS: number,
  record = true,
): Velocity | undefined | Promise<Velocity> {
  if (!keys.fingerprint && !keys.address) return undefined;
  const local = countInProcess(database, keys, now.getTime(), windowS * 1000, record);
  if (database.kind === 'pglite') return local;
  // PostgreSQL: this process's own sightings gate the shared count. Text or an address this node
  // has not seen before in the window (nearly every submission) costs no read; from its second
  // sighting here the stored rows are counted, so a flood spread over several nodes is counted
  // whole once it has reached any node twice.
  if (local.sameContent < 2 && local.sameAddress < 2) return local;
  // A flood of one text reaches this node many times a second: the stored count is read at most
  // once a second per key pair, this node's own sightings added on top in between.
  let memo = storedCounts.get(database);
  if (!memo) {
    memo = new Map();
    storedCounts.set(database, memo);
  }
  const memoKey = `${keys.fingerprint}|${keys.address}`;
  const nowMs = now.getTime();
  const hit = memo.get(memoKey);
  if (hit && nowMs - hit.at < STORED_COUNT_TTL_MS) {
    return {
      sameContent: Math.max(hit.counts.sameContent, local.sameContent),
      sameAddress: Math.max(hit.counts.sameAddress, local.sameAddress),
    };
  }
  const kept = memo;
  return countStored(database, orgId, keys, new Date(nowMs - windowS * 1000)).then((counts) => {
    if (kept.size >= MAX_KEPT) kept.clear();
    kept.set(memoKey, { at: nowMs, counts });
    return counts;
  });
}

/** How long a stored count is reused for the same key pair on this node. */
const STORED_COUNT_TTL_MS = 1000;
const storedCounts = new WeakMap<Database, Map<string, { at: number; counts: Velocity }>>();

/** Keys kept per database before the counter starts over (a flood of distinct texts cannot grow it without bound). */
const MAX_KEPT = 100_000;
const counters = new WeakMap<Database, Map<string, number[]>>();

/** The recent times of each key in this process (at most VELOCITY_LIMIT each), this post added. */
function countInProcess(database: Database, keys: VelocityKeys, nowMs: number, windowMs: number, record: boolean) {
  let seen = counters.get(database);
  if (!seen) {
    seen = new Map();
    counters.set(database, seen);
  }
  const kept = seen;
  const count = (k: string | null) => {
    if (!k) return 0;
    const times = (kept.get(k) ?? []).filter((t) => t > nowMs - windowMs);
    if (record) {
      times.push(nowMs);
      if (times.length > VELOCITY_LIMIT) times.shift();
      if (!kept.has(k) && kept.size >= MAX_KEPT) kept.clear();
      kept.set(k, times);
    }
    return Math.min(VELOCITY_LIMIT, times.length); // this post included: counted now, or on its first try
  };
  return {
    sameContent: count(keys.fingerprint && `t:${keys.fingerprint}`),
    sameAddress: count(keys.address && `a:${keys.address}`),
  };
}

/**
 * Counted from the stored rows, each count capped at VELOCITY_LIMIT: the partial index
 * (org_id, key, received_at) answers it reading at most that many entries, however large a flood.
 */
async function countStored(database: Database, orgId: string, keys: VelocityKeys, since: Date): Promise<Velocity> {
  const cap = VELOCITY_LIMIT - 1;
  const [row] = await database.rows<{ content: number; address: number }>(sql`select
    (select count(*) from (select 1 from submissions where org_id = ${orgId} and spam_fingerprint = ${keys.fingerprint}
      and received_at > ${since.toISOString()}::timestamptz limit ${cap}) c)::int as content,
    (select count(*) from (select 1 from submissions where org_id = ${orgId} and spam_address = ${keys.address}
      and received_at > ${since.toISOString()}::timestamptz limit ${cap}) a)::int as address`);
  return {
    sameContent: keys.fingerprint ? Number(row.content) + 1 : 0,
    sameAddress: keys.address ? Number(row.address) + 1 : 0,
  };
}
