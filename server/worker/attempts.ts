import { and, asc, eq, inArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts } from '../db/schema.js';
import { withSentAttempt } from '../present/explain.js';

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
  await keepSentAttempts(tx, deliveryIds);
  await tx.execute(sql`
    delete from delivery_attempts a
    where a.delivery_id in (${sql.join(
      deliveryIds.map((id) => sql`${id}`),
      sql`, `,
    )})
      and a.id not in (
        select b.id from delivery_attempts b where b.delivery_id = a.delivery_id order by b.id desc limit ${KEPT_ATTEMPTS}
      )`);
}

/**
 * Writes down the successful attempt of each sent delivery among the ids, as explain reads it from
 * the row (withSentAttempt), unless its latest stored success already is that attempt.
 */
async function keepSentAttempts(tx: Db, deliveryIds: string[]) {
  const sent = await tx
    .select({
      id: deliveries.id,
      orgId: deliveries.orgId,
      status: deliveries.status,
      sentAt: deliveries.sentAt,
      attempts: deliveries.attempts,
      lastResponse: deliveries.lastResponse,
    })
    .from(deliveries)
    .where(and(inArray(deliveries.id, deliveryIds), eq(deliveries.status, 'sent')));
  if (!sent.length) return;
  const successes = await tx
    .select()
    .from(deliveryAttempts)
    .where(
      and(
        inArray(
          deliveryAttempts.deliveryId,
          sent.map((d) => d.id),
        ),
        eq(deliveryAttempts.outcome, 'sent'),
      ),
    )
    .orderBy(asc(deliveryAttempts.id));
  const missing = sent.flatMap((d) => {
    const stored = successes.filter((a) => a.deliveryId === d.id);
    const all = withSentAttempt(d, stored);
    return all.length > stored.length ? [{ ...all[all.length - 1], orgId: d.orgId }] : [];
  });
  if (missing.length) await tx.insert(deliveryAttempts).values(missing);
}

/** Deletes the attempts of the deliveries `where` selects: before those deliveries are deleted or erased. */
export async function deleteAttempts(tx: Db, where: SQL | undefined) {
  await tx
    .delete(deliveryAttempts)
    .where(inArray(deliveryAttempts.deliveryId, tx.select({ id: deliveries.id }).from(deliveries).where(where)));
}
