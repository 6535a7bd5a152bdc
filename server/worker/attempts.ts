import { inArray, type SQL, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts } from '../db/schema.js';

/**
 * The kept attempts of route deliveries (delivery_attempts, migration 0023; docs/explain.md). The
 * worker writes them as it settles attempts (settle.ts, settle-sent.ts); the table has no foreign
 * key (its checks doubled the cost of each insert on PGlite), so whatever deletes deliveries deletes
 * their attempts first, with deleteAttempts.
 */

/** Attempts a delivery keeps from its earlier runs when a manual retry or replay starts a new one. */
export const KEPT_ATTEMPTS = 40;

/**
 * Before a manual retry or replay of route deliveries starts a new run: each keeps only its latest
 * KEPT_ATTEMPTS attempts, so a delivery never holds more than KEPT_ATTEMPTS + max_attempts rows.
 */
export async function trimAttempts(tx: Db, deliveryIds: string[]) {
  if (!deliveryIds.length) return;
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

/** Deletes the attempts of the deliveries `where` selects: before those deliveries are deleted or erased. */
export async function deleteAttempts(tx: Db, where: SQL | undefined) {
  await tx
    .delete(deliveryAttempts)
    .where(inArray(deliveryAttempts.deliveryId, tx.select({ id: deliveries.id }).from(deliveries).where(where)));
}
