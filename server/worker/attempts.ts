import { inArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts } from '../db/schema.js';
import { SAME_ATTEMPT_MS } from '../present/explain.js';

/**
 * The kept attempts of route deliveries (delivery_attempts, migration 0023; docs/explain.md). The
 * worker writes a row for each failed or dead attempt as it settles it (settle.ts); a successful
 * attempt is recorded by the delivery row itself (`attempts`, `sent_at`, `last_response`), which
 * explain reads as the run's last attempt (present/explain.ts, withSentAttempt), so the drain writes no
 * row per sent delivery. Rows of successes written by releases before that are told apart by their
 * time (started_at + latency_ms is sent_at). Only a manual retry or replay, which starts a new run
 * on a sent row, writes the success down first (trimAttempts). The table has no foreign key (its
 * checks doubled the cost of each insert on PGlite), so whatever deletes deliveries deletes their
 * attempts first, with deleteAttempts.
 */

/** Attempts a delivery keeps from its earlier runs when a manual retry or replay starts a new one. */
export const KEPT_ATTEMPTS = 40;

/**
 * Before a manual retry or replay of route deliveries starts a new run: a sent one's successful
 * attempt, until now only on the row, becomes an attempt row (unless a release before this one
 * wrote it), since the new run overwrites the row; then each keeps only its latest KEPT_ATTEMPTS
 * attempts, so a delivery never holds more than KEPT_ATTEMPTS + max_attempts rows.
 */
export async function trimAttempts(tx: Db, deliveryIds: string[]) {
  if (!deliveryIds.length) return;
  const ids = sql.join(
    deliveryIds.map((id) => sql`${id}`),
    sql`, `,
  );
  // started_at + latency_ms = sent_at, as explain's sentAttempt reads it (latency in whole ms).
  await tx.execute(sql`
    insert into delivery_attempts (org_id, delivery_id, n, started_at, latency_ms, status_code, error, next_attempt_at, outcome)
    select d.org_id, d.id, d.attempts, d.sent_at - make_interval(secs => l.ms / 1000.0), l.ms,
      case when jsonb_typeof(d.last_response->'status_code') = 'number' then (d.last_response->>'status_code')::numeric::int end,
      null, null, 'sent'
    from deliveries d
    cross join lateral (
      select case when jsonb_typeof(d.last_response->'latency_ms') = 'number'
        then greatest(0, round((d.last_response->>'latency_ms')::numeric))::int else 0 end as ms
    ) l
    where d.id in (${ids}) and d.status = 'sent' and d.sent_at is not null
      and not exists (
        select 1 from delivery_attempts a
        where a.delivery_id = d.id and a.outcome = 'sent' and a.n = d.attempts
          and abs(extract(epoch from a.started_at + make_interval(secs => a.latency_ms / 1000.0) - d.sent_at)) < ${SAME_ATTEMPT_MS / 1000}
      )`);
  await tx.execute(sql`
    delete from delivery_attempts a
    where a.delivery_id in (${ids})
      and a.id not in (
        select b.id from delivery_attempts b where b.delivery_id = a.delivery_id order by b.id desc limit ${KEPT_ATTEMPTS}
      )`);
}

/** Deletes the attempts of the deliveries `where` selects: before those deliveries are deleted or erased. */
export async function deleteAttempts(tx: Db, where: SQL | undefined) {
  await tx
    .delete(deliveryAttempts)
    .where(inArray(deliveryAttempts.deliveryId, tx.select({ id: deliveries.id }).from(deliveries).where(where)));
}
