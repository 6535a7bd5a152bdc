import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { textsOf } from './tokens.js';
import { emailsOf, VELOCITY_LIMIT } from './verdict.js';

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

// Salted by the organization: the same address hashes differently in each, and the column holds no address.
const hash = (orgId: string, kind: string, value: string) =>
  crypto.createHash('sha256').update(`${orgId}\n${kind}\n${value}`).digest().subarray(0, 16).toString('base64url');

/** The same text however it is spaced or capitalized. */
const normalize = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

/** The velocity keys of a submission's data. */
export function velocityKeys(orgId: string, data: Record<string, unknown>): VelocityKeys {
  const emails = emailsOf(data);
  const addresses = new Set(emails);
  const long = textsOf(data)
    .map(normalize)
    .filter((t) => t.length >= MIN_FINGERPRINT_CHARS && !addresses.has(t))
    .sort();
  return {
    fingerprint: long.length ? hash(orgId, 'text', long.join('\n')) : null,
    address: emails.length ? hash(orgId, 'address', emails[0]) : null,
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
 * same submission is decided again (a stale entry's retry), so it counts once.
 */
export async function recentVelocity(
  database: Database,
  orgId: string,
  keys: VelocityKeys,
  now: Date,
  windowS: number,
  record = true,
): Promise<Velocity | undefined> {
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
  const counts = await countStored(database, orgId, keys, new Date(nowMs - windowS * 1000));
  if (memo.size >= MAX_KEPT) memo.clear();
  memo.set(memoKey, { at: nowMs, counts });
  return counts;
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
