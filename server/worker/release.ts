import type { Deps } from '../core/deps.js';
import { OUTBOX, OUTBOX_KINDS, type OutboxKind } from './outbox.js';

/** A row this process claimed: which outbox, and the attempt count its claim left on it. */
export interface Held {
  id: string;
  kind: OutboxKind;
  attempts: number;
}

const RELEASE = (table: string) => `update ${table} d
    set status = 'pending', next_attempt_at = $2::timestamptz, lease_until = null, attempts = d.attempts - 1
    from jsonb_to_recordset($1::jsonb) as v(id text, attempts int)
    where d.id = v.id and d.status = 'sending' and d.attempts = v.attempts`;
const TEXT = Object.fromEntries(OUTBOX_KINDS.map((k) => [k, RELEASE(OUTBOX[k].table)])) as Record<OutboxKind, string>;

/**
 * Hands claimed rows back unsent: `pending`, due at `now`, and the attempt their claim counted
 * taken back, so another worker takes them at once instead of after the lease. Only rows still
 * in the state this process's claim left them are touched.
 */
export async function releaseClaims(deps: Deps, held: Held[], now: Date) {
  for (const kind of OUTBOX_KINDS) {
    const rows = held.filter((h) => h.kind === kind).map(({ id, attempts }) => ({ id, attempts }));
    if (rows.length) await deps.database.prepared(TEXT[kind], [JSON.stringify(rows), now.toISOString()]);
  }
  // Other processes' workers wake for them now (NOTIFY), not on their next tick.
  if (held.length) deps.wake();
}
