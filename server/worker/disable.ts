import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import type { Claimed } from '../db/rows.js';
import { destinations, type systemWebhooks } from '../db/schema.js';
import { appendEvent } from '../events.js';
import { OUTBOX, type OutboxKind } from './outbox.js';
import { SUBMITTER_TARGET } from './submitter-target.js';
import type { SendResult } from './types.js';

/** A target row as the shared paths read it (a system webhook has only the columns both share). */
type TargetRow = typeof destinations.$inferSelect;

/**
 * Switching a destination (or system webhook) off and on. A disabled target's deliveries wait as
 * `pending` with no next attempt: the claim only reads due rows, so they cost it nothing and are
 * never claimed and handed back in a loop. Turning the target on makes them due at once.
 */

/** Every queued row of a target waits (pending, not due); dead and sent ones stay as they are. */
export async function parkRows(tx: Db, kind: OutboxKind, targetId: string) {
  const { rows, rowTarget } = OUTBOX[kind];
  await tx
    .update(rows)
    .set({ status: 'pending', nextAttemptAt: null, leaseUntil: null })
    .where(and(eq(rowTarget, targetId), inArray(rows.status, ['pending', 'failed'])));
}

/** Makes every waiting row of a target due now; returns how many. */
export async function resumeRows(tx: Db, kind: OutboxKind, targetId: string, now: Date): Promise<number> {
  const { rows, rowTarget } = OUTBOX[kind];
  const resumed = await tx
    .update(rows)
    .set({ nextAttemptAt: now })
    .where(and(eq(rowTarget, targetId), eq(rows.status, 'pending'), isNull(rows.nextAttemptAt)))
    .returning({ id: rows.id });
  return resumed.length;
}

/**
 * Turns a destination or system webhook off or on (PATCH {enabled}); inside the caller's
 * transaction. Off: its queued rows wait. On: the failure run is forgotten (failing_since, health)
 * and they are due now. Returns the row, or null when it is not the organization's.
 */
export async function setTargetEnabled(
  tx: Db,
  kind: OutboxKind,
  orgId: string,
  id: string,
  enabled: boolean,
  now: Date,
): Promise<TargetRow | null> {
  const { targets } = OUTBOX[kind];
  const [row] = await tx
    .update(targets)
    .set(
      enabled
        ? { enabled, disabledReason: null, failingSince: null, consecutiveFailures: 0, health: 'unknown' }
        : { enabled, disabledReason: 'disabled by hand' },
    )
    .where(and(eq(targets.id, id), eq(targets.orgId, orgId)))
    .returning();
  if (!row) return null;
  // A target still waiting for a person's approval stays parked when it is switched on.
  if (enabled && row.approval === null) await resumeRows(tx, kind, id, now);
  else await parkRows(tx, kind, id);
  return row;
}

/** setTargetEnabled for a destination (PATCH /v1/destinations/{id} {enabled}). */
export const setDestinationEnabled = (tx: Db, orgId: string, id: string, enabled: boolean, now: Date) =>
  setTargetEnabled(tx, 'delivery', orgId, id, enabled, now);

/** setTargetEnabled for a system webhook (PATCH /v1/webhooks/{id} {enabled}). */
export const setHookEnabled = async (tx: Db, orgId: string, id: string, enabled: boolean, now: Date) =>
  (await setTargetEnabled(tx, 'hook', orgId, id, enabled, now)) as typeof systemWebhooks.$inferSelect | null;

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
 * After a failed attempt (settle's transaction, the target row as the failure left it): disables
 * the target when disableReason says so (a 410 counts for webhooks: every system webhook, and
 * webhook destinations), appending the outbox's disabled event, and keeps this row waiting when
 * the target is off. Returns how many system-webhook deliveries the event planned, and whether the
 * row was made to wait.
 */
export async function afterFailure(
  tx: Db,
  deps: Deps,
  kind: OutboxKind,
  row: Claimed,
  target: TargetRow,
  r: SendResult,
): Promise<{ dispatched: number; parked: boolean }> {
  const { rows, targets, subjectKey, disabledEvent, targetType } = OUTBOX[kind];
  const reason = disableReason(deps, target, r, targetType(target) === 'webhook');
  let dispatched = 0;
  if (reason) {
    await tx.update(targets).set({ enabled: false, disabledReason: reason }).where(eq(targets.id, target.id));
    const ev = await appendEvent(tx, {
      orgId: row.org_id,
      type: disabledEvent,
      subject: { [subjectKey]: target.id },
      data: { reason, failing_since: target.failingSince?.toISOString() ?? null, last_error: r.error },
      now: deps.now(),
    });
    dispatched += ev.dispatched;
    await parkRows(tx, kind, target.id);
  } else if (!target.enabled) {
    // Sent while the target was being switched off: the failure waits with the others.
    await tx
      .update(rows)
      .set({ status: 'pending', nextAttemptAt: null })
      .where(and(eq(rows.id, row.id), eq(rows.status, 'failed')));
  }
  return { dispatched, parked: reason !== null || !target.enabled };
}

/** The failure-run bookkeeping settle adds to a target's update: the run starts at its first failure. */
export const failingSinceOnFailure = (now: Date, column: AnyPgColumn) =>
  sql`coalesce(${column}, ${now.toISOString()}::timestamptz)`;

/**
 * A queued row is due now, unless its target is disabled or waits for a person's approval
 * (settings.approve_destinations): then it waits (not due). Mail to
 * submitters has the built-in target, which has no row and is never disabled: always due.
 */
export const dueNowUnlessDisabled = (now: Date, kind: OutboxKind = 'delivery') => {
  const { targets, rowTarget } = OUTBOX[kind];
  const builtIn = kind === 'delivery' ? sql`${rowTarget} = ${SUBMITTER_TARGET} or ` : sql``;
  return sql`case when ${builtIn}exists (select 1 from ${targets} where ${targets.id} = ${rowTarget} and ${targets.enabled} and ${targets.approval} is null) then ${now.toISOString()}::timestamptz else null end`;
};

/** The same for a row being inserted for the destination `destinationId` (a digest delivery). */
export const dueNowUnlessDisabledFor = (destinationId: string, now: Date) =>
  sql`case when exists (select 1 from ${destinations} where ${destinations.id} = ${destinationId} and ${destinations.enabled} and ${destinations.approval} is null) then ${now.toISOString()}::timestamptz else null end`;
