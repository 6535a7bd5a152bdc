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

/**
 * The organization's submissions since `since` with the same fingerprint and with the same address,
 * this one included (it is not stored yet), each count capped just past VELOCITY_LIMIT: the index
 * (org_id, key, received_at) answers it reading at most that many entries, however large a flood.
 */
export async function recentVelocity(
  database: Database,
  orgId: string,
  keys: VelocityKeys,
  since: Date,
): Promise<{ sameContent: number; sameAddress: number } | undefined> {
  if (!keys.fingerprint && !keys.address) return undefined;
  const cap = VELOCITY_LIMIT;
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
