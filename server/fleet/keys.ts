import crypto from 'node:crypto';
import type { Config } from '../config.js';

/** Advisory-lock class of the fleet's key fingerprint (beside the migration lock, 7271001). */
const KEY_LOCK_CLASS = 7_271_002;

/**
 * What every node must sign and verify with alike, as one fingerprint. The file-link and dashboard
 * keys live in the database (server_secrets), so every node of one database shares them by
 * construction; BILLING_WEBHOOK_SECRET is a setting, so it is the one a node could hold apart.
 */
export function keyFingerprint(config: Config): { text: string; lockId: number; objid: number } {
  const digest = crypto
    .createHash('sha256')
    .update(`formsvc fleet keys\nbilling_webhook_secret=${config.billingWebhookSecret ?? ''}`)
    .digest();
  return { text: digest.subarray(0, 6).toString('hex'), lockId: digest.readInt32BE(0), objid: digest.readUInt32BE(0) };
}

/**
 * Fails start-up (one line) when another live node of this PostgreSQL database signs with a
 * different key, else holds a shared advisory lock naming this node's fingerprint for the life of
 * the process (on a connection of its own: a killed node's lock goes with its session, so nothing
 * stale is left to clear, and a fleet restarted together with a new key starts cleanly).
 */
export async function holdKeyFingerprint(url: string, config: Config): Promise<() => Promise<void>> {
  const { default: postgres } = await import('postgres');
  const fp = keyFingerprint(config);
  const conn = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10, idle_timeout: 0 });
  try {
    const others = await conn<{ objid: string }[]>`
      select distinct objid::text from pg_locks
      where locktype = 'advisory' and classid = ${KEY_LOCK_CLASS} and objsubid = 2
        and database = (select oid from pg_database where datname = current_database())
        and objid::bigint <> ${fp.objid}`;
    if (others.length) {
      throw new KeyMismatch(
        `BILLING_WEBHOOK_SECRET differs from the one the running nodes of this database use: give every node the same value (to change it, stop every node and start them with the new one)`,
      );
    }
    await conn`select pg_advisory_lock_shared(${KEY_LOCK_CLASS}::int, ${fp.lockId}::int)`;
  } catch (err) {
    await conn.end({ timeout: 5 });
    throw err;
  }
  return () => conn.end({ timeout: 5 });
}

export class KeyMismatch extends Error {}
