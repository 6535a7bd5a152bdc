import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Database, Db } from '../db/client.js';
import { fmix, hashed, MIN_SCANNED_CHARS, scanText, textHash } from './scan.js';
import { type SpamFacts, spamFacts, VELOCITY_LIMIT } from './verdict.js';

/**
 * Velocity: how many recent submissions across an organization's forms carry the same text, or
 * come from the same address, counted by two hashes (a text's fingerprint, an address): in the
 * process, and on PostgreSQL with the other nodes' sightings (table spam_sightings, written once a
 * second only for keys a node has seen twice). Nothing is written with the submission itself
 * (docs/spam.md, "Velocity").
 */
export interface VelocityKeys {
  /** a hash of the submission's long text values (20+ characters, addresses left out), or null */
  fingerprint: string | null;
  /** a hash of its first email address, or null */
  address: string | null;
}

export const NO_VELOCITY_KEYS: VelocityKeys = { fingerprint: null, address: null };
/** A value shorter than this is a name, a choice or a subject line: too common to count. */
export const MIN_FINGERPRINT_CHARS = MIN_SCANNED_CHARS;

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

/**
 * The keys this process counts by: the same texts and address as VelocityKeys, as two 32-bit hashes
 * each (53 bits kept), computed over the characters without a copy and without SHA-256. Nearly
 * every submission's keys are seen once, so only these are made; the stored keys (SHA-256, which
 * the other nodes compute too) are derived from the facts when a key is written or read, from its
 * second sighting on PostgreSQL.
 */
export interface CounterKeys {
  fingerprint: number | null;
  address: number | null;
  orgId: string;
  facts: SpamFacts;
  /** the stored keys, once computed */
  stored?: VelocityKeys;
}

export const NO_COUNTER_KEYS: CounterKeys = {
  fingerprint: null,
  address: null,
  orgId: '',
  facts: { texts: [], emails: [], scans: [] },
  stored: NO_VELOCITY_KEYS,
};

/** The seeds of one organization's keys (a text's, an address's), kept for the last organization asked. */
const seeded = { orgId: '', text1: 0, text2: 0, address1: 0, address2: 0 };

function seedsOf(orgId: string) {
  if (seeded.orgId === orgId) return seeded;
  let s1 = 0x811c9dc5 | 0;
  let s2 = 0x9747b28c | 0;
  for (let i = 0; i < orgId.length; i += 1) {
    s1 = Math.imul(s1 ^ orgId.charCodeAt(i), 0x01000193);
    s2 = Math.imul(s2 ^ orgId.charCodeAt(i), 0x5bd1e995);
    s2 ^= s2 >>> 15;
  }
  seeded.orgId = orgId;
  seeded.text1 = fmix(s1 ^ 1);
  seeded.text2 = fmix(s2 ^ 1);
  seeded.address1 = fmix(s1 ^ 2);
  seeded.address2 = fmix(s2 ^ 2);
  return seeded;
}

/**
 * 53 bits of a key's two 32-bit halves, salted by the organization and the kind of key (fmix is a
 * bijection: different halves stay different keys): a Map key and a slot of the table of lone
 * keys, with no string made.
 */
const counterKey = (a: number, b: number, seed1: number, seed2: number) =>
  fmix(a ^ seed1) * 2 ** 21 + (fmix(b ^ seed2) >>> 11);

/**
 * The counter keys of a submission's texts and addresses (the stored keys' equivalents: the same
 * text, the same key). A text's hash comes from its scan (scan.ts: the pass that also reads it for
 * the content signals); the texts' hashes are summed, so the same texts in any order are one key.
 */
export function counterKeysOf(orgId: string, facts: SpamFacts): CounterKeys {
  const { texts, emails, scans } = facts;
  let a = 0;
  let b = 0;
  let long = 0;
  for (let i = 0; i < texts.length; i += 1) {
    const text = texts[i];
    if (text.length < MIN_FINGERPRINT_CHARS) continue;
    const scan = scans?.[i] ?? scanText(text);
    if (!scan.ascii) {
      // Not ASCII: normalized by the stored keys' own function, then hashed as it is.
      const t = normalize(text);
      if (t.length < MIN_FINGERPRINT_CHARS || emails.includes(t)) continue;
      textHash(t);
      a = (a + hashed.h1) >>> 0;
      b = (b + hashed.h2) >>> 0;
    } else if (scan.n < MIN_FINGERPRINT_CHARS) continue;
    // A whole address is left out (an @ and no inner space: normalized, it is trimmed and lowercased).
    else if (scan.address && emails.length && emails.includes(text.trim().toLowerCase())) continue;
    else {
      a = (a + scan.h1) >>> 0;
      b = (b + scan.h2) >>> 0;
    }
    long += 1;
  }
  const seeds = seedsOf(orgId);
  const fingerprint = long ? counterKey(a, b, seeds.text1, seeds.text2) : null;
  let address: number | null = null;
  if (emails.length) {
    textHash(emails[0]);
    address = counterKey(hashed.h1, hashed.h2, seeds.address1, seeds.address2);
  }
  return { fingerprint, address, orgId, facts };
}

/** The stored keys of counter keys (SHA-256, computed once, only when a sighting is shared). */
function storedKeys(keys: CounterKeys): VelocityKeys {
  keys.stored ??= velocityKeysOf(keys.orgId, keys.facts);
  return keys.stored;
}

export interface Velocity {
  sameContent: number;
  sameAddress: number;
}

/**
 * What one process keeps per database (a test's copy of the Database object plays another node):
 * its recent sightings of each key, the sightings it still has to write for the other nodes, and
 * the other nodes' counts it read last.
 */
interface NodeState {
  /** this process's rows in spam_sightings (random per process) */
  node: string;
  /**
   * Keys seen once, in a fixed table allocated once: a slot per hash of the key, holding a check
   * code and the time side by side (one page read per key on a request that finds the table out of
   * cache). Nearly every submission's keys stop here, so they allocate nothing and leave
   * the garbage collector nothing to trace (see sighted).
   */
  lone: Float64Array;
  /** keys seen twice or more in the window: their last VELOCITY_LIMIT times */
  seen: Map<number, number[]>;
  /** sightings to write at the next flush, per key */
  pending: Map<string, { orgId: string; n: number }>;
  flushing: NodeJS.Timeout | null;
  /** the other nodes' counts of a key pair, read at most once a second */
  others: Map<string, { at: number; counts: Velocity }>;
}

/** How long the other nodes' count of a key pair is reused on this node. */
const OTHERS_TTL_MS = 1000;
/** How often a node writes the sightings other nodes may need (only while it has some). */
export const FLUSH_MS = 1000;
/** Repeated keys kept per database before that map starts over (a flood of distinct texts cannot grow it without bound). */
const MAX_KEPT = 100_000;
/** Slots of the table of keys seen once (2^18: 4 MB per process). */
const LONE_SLOTS = 1 << 18;
const states = new WeakMap<Database, NodeState>();
/** The last database asked for and its state (a process has one): no WeakMap read per submission. */
let last: { database: Database; st: NodeState } | null = null;

function stateOf(database: Database): NodeState {
  if (last?.database === database) return last.st;
  let st = states.get(database);
  if (!st) {
    st = {
      node: crypto.randomUUID(),
      lone: new Float64Array(2 * LONE_SLOTS),
      seen: new Map(),
      pending: new Map(),
      flushing: null,
      others: new Map(),
    };
    states.set(database, st);
  }
  last = { database, st };
  return st;
}

/**
 * Makes this process's counter for a database off the request path (start-up calls it once the
 * server listens), writing every page of its table of lone keys: the first write to a page costs a
 * page fault (far more inside a virtual machine), which the first submissions would otherwise pay,
 * a few hundred of them one fault each.
 */
export function warmVelocity(database: Database): void {
  setImmediate(() => {
    const { lone } = stateOf(database);
    // one write per 4 KB page, of the value already there (a submission may have come first)
    for (let i = 0; i < lone.length; i += 512) lone[i] += 0;
  }).unref?.();
}

/**
 * The organization's recent submissions with the same fingerprint and from the same address, this
 * one included (it is not stored yet), each capped at VELOCITY_LIMIT. Counted in this process; on
 * PostgreSQL, where several nodes share the database, the other nodes' written sightings are added
 * (docs/spam.md, "Velocity"). `record` is false when the same submission is decided again (a stale
 * entry's retry), so it counts once. A promise only when it reads: the in-process answer comes back
 * as it is, so intake's common case awaits nothing.
 */
export function recentVelocity(
  database: Database,
  keys: CounterKeys,
  now: Date,
  windowS: number,
  record = true,
): Velocity | undefined | Promise<Velocity> {
  if (!keys.fingerprint && !keys.address) return undefined;
  const st = stateOf(database);
  const nowMs = now.getTime();
  const windowMs = windowS * 1000;
  const shared = database.kind === 'postgres';
  const local = {
    sameContent: sighted(database, st, keys, 'fingerprint', nowMs, windowMs, record, shared),
    sameAddress: sighted(database, st, keys, 'address', nowMs, windowMs, record, shared),
  };
  // PGlite: one process per database (its lock), so this process's count is the whole count.
  // PostgreSQL: text or an address this node has not seen before in the window (nearly every
  // submission) costs no read; from its second sighting here the other nodes' sightings are added,
  // read at most once a second per key pair.
  if (!shared || (local.sameContent < 2 && local.sameAddress < 2)) return local;
  const memoKey = `${keys.fingerprint}|${keys.address}`;
  const hit = st.others.get(memoKey);
  if (hit && nowMs - hit.at < OTHERS_TTL_MS) return added(hit.counts, local);
  return countOthers(database, st.node, storedKeys(keys), new Date(nowMs - windowMs)).then((counts) => {
    if (st.others.size >= MAX_KEPT) st.others.clear();
    st.others.set(memoKey, { at: nowMs, counts });
    return added(counts, local);
  });
}

function added(others: Velocity, local: Velocity): Velocity {
  return {
    sameContent: local.sameContent ? Math.min(VELOCITY_LIMIT, others.sameContent + local.sameContent) : 0,
    sameAddress: local.sameAddress ? Math.min(VELOCITY_LIMIT, others.sameAddress + local.sameAddress) : 0,
  };
}

/**
 * One key's sightings in this process within the window (at most VELOCITY_LIMIT), this one added
 * when `record`. A key's first sighting goes into the table of lone keys: its slot (18 bits of the
 * counter key) keeps a check code (32 other bits) and the time, and a later key landing in the same slot replaces it. So a
 * lone sighting can be forgotten before the window ends when the table is busy (over a quarter of
 * a million distinct texts and addresses in the window): the next sighting of that key then counts
 * as a first one, one short. From the second sighting, the key's times are kept exactly. On
 * PostgreSQL, the sightings other nodes may need are queued for the next flush from the second
 * one on (that one and the lone one before it), by their stored keys (SHA-256, computed then).
 */
function sighted(
  database: Database,
  st: NodeState,
  keys: CounterKeys,
  which: 'fingerprint' | 'address',
  nowMs: number,
  windowMs: number,
  record: boolean,
  shared: boolean,
): number {
  const key = keys[which];
  if (key === null) return 0;
  const since = nowMs - windowMs;
  // Nearly every key is new: with no repeated key kept, the map is not read.
  let times = st.seen.size ? st.seen.get(key)?.filter((t) => t > since) : undefined;
  if (times && !record) return Math.max(1, Math.min(VELOCITY_LIMIT, times.length)); // counted on its first try
  // A repeated key whose times have all left the window is a lone one again.
  if (times?.length === 0) {
    st.seen.delete(key);
    times = undefined;
  }
  const kept = times !== undefined;
  if (times === undefined) {
    // A retry of a post whose first try found no earlier sighting: it was the lone one.
    if (!record) return 1;
    const at = 2 * (key % LONE_SLOTS);
    const code = Math.floor(key / 2 ** 21) | 1;
    const before = st.lone[at] === code ? st.lone[at + 1] : 0;
    if (before <= since) {
      st.lone[at] = code;
      st.lone[at + 1] = nowMs;
      return 1;
    }
    st.lone[at] = 0; // moved to the map
    times = [before];
  }
  times.push(nowMs);
  if (times.length > VELOCITY_LIMIT) times.shift();
  // The lone sighting is written with the second; after that, each one as it comes.
  if (shared) queue(database, st, keys.orgId, storedKeys(keys)[which] as string, kept ? 1 : 2);
  if (!kept && st.seen.size >= MAX_KEPT) st.seen.clear();
  st.seen.set(key, times);
  return times.length;
}

function queue(database: Database, st: NodeState, orgId: string, key: string, n: number) {
  const p = st.pending.get(key);
  if (p) p.n += n;
  else st.pending.set(key, { orgId, n });
  if (!st.flushing) {
    st.flushing = setTimeout(() => {
      st.flushing = null;
      // Velocity is a signal, not a record: a flush that fails (the database going away at
      // shutdown, say) loses a second of sightings, and the next sightings are written again.
      flushSightings(database).catch(() => undefined);
    }, FLUSH_MS);
    st.flushing.unref();
  }
}

const FLUSH = `insert into spam_sightings (org_id, key, node, at, n)
  select x.org_id, x.key, $2, $3::timestamptz, x.n from jsonb_to_recordset($1::jsonb) as x(org_id text, key text, n int)
  where exists (select 1 from organizations o where o.id = x.org_id)`;

/** Writes this process's queued sightings now (the timer does it a second after the first; tests call it). */
export async function flushSightings(database: Database): Promise<number> {
  const st = stateOf(database);
  if (!st.pending.size) return 0;
  const rows = [...st.pending].map(([key, { orgId, n }]) => ({ org_id: orgId, key, n }));
  st.pending.clear();
  await database.prepared(FLUSH, [JSON.stringify(rows), st.node, new Date().toISOString()]);
  return rows.length;
}

const OTHERS = `select
  (select coalesce(sum(n), 0) from (select n from spam_sightings where key = $1 and at > $3::timestamptz and node <> $4
    limit ${VELOCITY_LIMIT}) c)::int as content,
  (select coalesce(sum(n), 0) from (select n from spam_sightings where key = $2 and at > $3::timestamptz and node <> $4
    limit ${VELOCITY_LIMIT}) a)::int as address`;

/**
 * The other nodes' sightings of the window, each capped (every row counts at least one, so
 * VELOCITY_LIMIT rows are enough however large the flood); the index (key, at) answers it.
 */
async function countOthers(database: Database, node: string, keys: VelocityKeys, since: Date): Promise<Velocity> {
  const [row] = await database.prepared<{ content: number; address: number }>(OTHERS, [
    keys.fingerprint,
    keys.address,
    since.toISOString(),
    node,
  ]);
  return { sameContent: Number(row?.content ?? 0), sameAddress: Number(row?.address ?? 0) };
}

/** Deletes sightings older than the window (housekeeping), in bounded batches. */
export async function deleteOldSightings(
  deps: { database: Database; now: () => Date; config: { spamVelocityWindowS: number } },
  batch = 5000,
) {
  const before = new Date(deps.now().getTime() - deps.config.spamVelocityWindowS * 1000).toISOString();
  const gone = await deps.database.rows(sql`
    delete from spam_sightings where id in (
      select id from spam_sightings where at < ${before}::timestamptz limit ${batch}
    )
    returning 1`);
  return { deleted: gone.length };
}

/** Erasure: the sightings of one address in an organization (its hash; they are gone within the window anyway). */
export async function deleteAddressSightings(tx: Db, orgId: string, email: string) {
  await tx.execute(
    sql`delete from spam_sightings where key = ${fingerprintHash(orgId, 'address', email.trim().toLowerCase())}`,
  );
}
