import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.js';
import { deliveries, destinations, systemWebhookDeliveries, systemWebhooks } from '../db/schema.js';
import { appendEvent } from '../events.js';
import type { Deps } from '../http/context.js';
import type { Claimed } from './claim.js';
import type { SendResult } from './types.js';

type DestinationRow = typeof destinations.$inferSelect;
type HookRow = typeof systemWebhooks.$inferSelect;

/**
 * Switching a destination (or system webhook) off and on. A disabled target's deliveries wait as
 * `pending` with no next attempt: the claim only reads due rows, so they cost it nothing and are
 * never claimed and handed back in a loop. Turning the target on makes them due at once.
 */

/** Every queued delivery of a destination waits (pending, not due); dead and sent ones stay as they are. */
async function parkDeliveries(tx: Db, destinationId: string) {
  await tx
    .update(deliveries)
    .set({ status: 'pending', nextAttemptAt: null, leaseUntil: null })
    .where(and(eq(deliveries.destinationId, destinationId), inArray(deliveries.status, ['pending', 'failed'])));
}

async function parkHookDeliveries(tx: Db, webhookId: string) {
  await tx
    .update(systemWebhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: null, leaseUntil: null })
    .where(
      and(
        eq(systemWebhookDeliveries.webhookId, webhookId),
        inArray(systemWebhookDeliveries.status, ['pending', 'failed']),
      ),
    );
}

/** Makes every waiting delivery of a destination due now; returns how many. */
export async function resumeDeliveries(tx: Db, destinationId: string, now: Date): Promise<number> {
  const rows = await tx
    .update(deliveries)
    .set({ nextAttemptAt: now })
    .where(
      and(
        eq(deliveries.destinationId, destinationId),
        eq(deliveries.status, 'pending'),
        isNull(deliveries.nextAttemptAt),
      ),
    )
    .returning({ id: deliveries.id });
  return rows.length;
}

async function resumeHookDeliveries(tx: Db, webhookId: string, now: Date): Promise<number> {
  const rows = await tx
    .update(systemWebhookDeliveries)
    .set({ nextAttemptAt: now })
    .where(
      and(
        eq(systemWebhookDeliveries.webhookId, webhookId),
        eq(systemWebhookDeliveries.status, 'pending'),
        isNull(systemWebhookDeliveries.nextAttemptAt),
      ),
    )
    .returning({ id: systemWebhookDeliveries.id });
  return rows.length;
}

/**
 * Turns a destination off or on (PATCH {enabled}); inside the caller's transaction. Off: its queued
 * deliveries wait. On: the failure run is forgotten (failing_since, health) and they are due now.
 * Returns the row, or null when it is not the organization's.
 */
export async function setDestinationEnabled(tx: Db, orgId: string, id: string, enabled: boolean, now: Date) {
  const [row] = await tx
    .update(destinations)
    .set(
      enabled
        ? { enabled, disabledReason: null, failingSince: null, consecutiveFailures: 0, health: 'unknown' }
        : { enabled, disabledReason: 'disabled by hand' },
    )
    .where(and(eq(destinations.id, id), eq(destinations.orgId, orgId)))
    .returning();
  if (!row) return null;
  if (enabled) await resumeDeliveries(tx, id, now);
  else await parkDeliveries(tx, id);
  return row;
}

/** The same for a system webhook (PATCH /v1/webhooks/{id} {enabled}). */
export async function setHookEnabled(tx: Db, orgId: string, id: string, enabled: boolean, now: Date) {
  const [row] = await tx
    .update(systemWebhooks)
    .set(
      enabled
        ? { enabled, disabledReason: null, failingSince: null, consecutiveFailures: 0, health: 'unknown' }
        : { enabled, disabledReason: 'disabled by hand' },
    )
    .where(and(eq(systemWebhooks.id, id), eq(systemWebhooks.orgId, orgId)))
    .returning();
  if (!row) return null;
  if (enabled) await resumeHookDeliveries(tx, id, now);
  else await parkHookDeliveries(tx, id);
  return row;
}

/**
 * Why a failing target is switched off now, or null: a webhook's 410 Gone at once, otherwise a run
 * of failures without a single success lasting DESTINATION_DISABLE_AFTER_S.
 */
export function disableReason(
  deps: Deps,
  target: { enabled: boolean; failingSince: Date | null },
  r: SendResult,
  webhook: boolean,
): string | null {
  if (!target.enabled) return null;
  if (webhook && r.status_code === 410) return 'gone';
  const since = target.failingSince;
  if (since && deps.now().getTime() - since.getTime() >= deps.config.destinationDisableAfterS * 1000) {
    return `failing since ${since.toISOString()}`;
  }
  return null;
}

/**
 * After a failed attempt of a route delivery (settle's transaction, the destination row as the
 * failure left it): disables the destination when disableReason says so, appending
 * `destination.disabled`, and keeps this row waiting when the destination is off. Returns how many
 * system-webhook deliveries the event planned, and whether the row was made to wait.
 */
export async function afterDeliveryFailure(
  tx: Db,
  deps: Deps,
  row: Claimed,
  dest: DestinationRow,
  r: SendResult,
): Promise<{ dispatched: number; parked: boolean }> {
  const reason = disableReason(deps, dest, r, dest.type === 'webhook');
  let dispatched = 0;
  if (reason) {
    await tx.update(destinations).set({ enabled: false, disabledReason: reason }).where(eq(destinations.id, dest.id));
    const ev = await appendEvent(tx, {
      orgId: row.org_id,
      type: 'destination.disabled',
      subject: { destination_id: dest.id },
      data: { reason, failing_since: dest.failingSince?.toISOString() ?? null, last_error: r.error },
      now: deps.now(),
    });
    dispatched += ev.dispatched;
    await parkDeliveries(tx, dest.id);
  } else if (!dest.enabled) {
    // Sent while the destination was being switched off: the failure waits with the others.
    await tx
      .update(deliveries)
      .set({ status: 'pending', nextAttemptAt: null })
      .where(and(eq(deliveries.id, row.id), eq(deliveries.status, 'failed')));
  }
  return { dispatched, parked: reason !== null || !dest.enabled };
}

/** After a failed attempt of a system-webhook delivery: the same rule, appending `webhook.disabled`. */
export async function afterHookFailure(tx: Db, deps: Deps, row: Claimed, hook: HookRow, r: SendResult) {
  const reason = disableReason(deps, hook, r, true);
  let dispatched = 0;
  if (reason) {
    await tx
      .update(systemWebhooks)
      .set({ enabled: false, disabledReason: reason })
      .where(eq(systemWebhooks.id, hook.id));
    const ev = await appendEvent(tx, {
      orgId: row.org_id,
      type: 'webhook.disabled',
      subject: { webhook_id: hook.id },
      data: { reason, failing_since: hook.failingSince?.toISOString() ?? null, last_error: r.error },
      now: deps.now(),
    });
    dispatched += ev.dispatched;
    await parkHookDeliveries(tx, hook.id);
  } else if (!hook.enabled) {
    await tx
      .update(systemWebhookDeliveries)
      .set({ status: 'pending', nextAttemptAt: null })
      .where(and(eq(systemWebhookDeliveries.id, row.id), eq(systemWebhookDeliveries.status, 'failed')));
  }
  return { dispatched, parked: reason !== null || !hook.enabled };
}

/** The failure-run bookkeeping settle adds to a target's update: the run starts at its first failure. */
export const failingSinceOnFailure = (now: Date, column: AnyPgColumn) =>
  sql`coalesce(${column}, ${now.toISOString()}::timestamptz)`;

/** A queued delivery is due now, unless its destination is disabled: then it waits (not due). */
export const dueNowUnlessDisabled = (now: Date) =>
  sql`case when exists (select 1 from ${destinations} where ${destinations.id} = ${deliveries.destinationId} and ${destinations.enabled}) then ${now.toISOString()}::timestamptz else null end`;

/** The same for a row being inserted for the destination `destinationId` (a digest delivery). */
export const dueNowUnlessDisabledFor = (destinationId: string, now: Date) =>
  sql`case when exists (select 1 from ${destinations} where ${destinations.id} = ${destinationId} and ${destinations.enabled}) then ${now.toISOString()}::timestamptz else null end`;
