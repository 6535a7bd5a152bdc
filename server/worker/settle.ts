import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, destinations, systemWebhookDeliveries, systemWebhooks } from '../db/schema.js';
import { appendEvent } from '../events.js';
import type { Deps } from '../http/context.js';
import type { Claimed } from './claim.js';
import { afterDeliveryFailure, afterHookFailure, failingSinceOnFailure } from './disable.js';
import { type DeliveryPolicy, isFinal, policyOf } from './policy.js';
import type { SendResult } from './types.js';

/** Consecutive failures after which a destination (or system webhook) reads as `failing`. */
export const FAILING_AFTER = 5;
/** Alerts (`destination.failing`, and `delivery.dead` to system webhooks) at most once an hour per destination. */
export const ALERT_THROTTLE_MS = 60 * 60 * 1000;

export type Outcome = 'sent' | 'failed' | 'dead';

/** What is stored as last_response: the spec's DeliveryResult. */
export function storedResult(r: SendResult) {
  return {
    ok: r.ok,
    status_code: r.status_code,
    latency_ms: r.latency_ms,
    response_excerpt: r.response_excerpt.slice(0, 500),
    error: r.error,
  };
}

export function outcomeOf(row: Claimed, r: SendResult, policy: DeliveryPolicy = policyOf(row.type)): Outcome {
  if (r.ok) return 'sent';
  return isFinal(policy, r) || row.attempts >= row.max_attempts ? 'dead' : 'failed';
}

/** When a failed attempt is tried again (the row type's backoff), or null when it is not. */
function retryAt(deps: Deps, row: Claimed, r: SendResult, outcome: Outcome, now: Date): Date | null {
  if (outcome !== 'failed') return null;
  return new Date(
    now.getTime() + policyOf(row.type).backoffMs(row.attempts, deps.config.retryBaseMs, r.retry_after_ms),
  );
}

/**
 * Records one attempt of a route delivery in one transaction: the delivery row (guarded on the
 * attempt it claimed, so a worker whose lease ran out cannot overwrite a newer attempt), the
 * destination's health and verified flag, and the events `delivery.sent`, `delivery.dead`,
 * `destination.failing`. Answers how many events were fanned out to system webhooks, and when the
 * delivery is tried again.
 */
export async function settleDelivery(
  deps: Deps,
  row: Claimed,
  r: SendResult,
): Promise<{ dispatched: number; retryAt: Date | null }> {
  const now = deps.now();
  const outcome = outcomeOf(row, r);
  const next = retryAt(deps, row, r, outcome, now);
  const lastError =
    outcome === 'dead' && !isFinal(policyOf(row.type), r) && !r.ok
      ? `${r.error ?? 'failed'} (gave up after ${row.attempts} attempts)`
      : r.ok
        ? null
        : r.error;
  return deps.database.db.transaction(async (tx) => {
    const updated = await tx
      .update(deliveries)
      .set({
        status: outcome,
        nextAttemptAt: next,
        leaseUntil: null,
        lastResponse: storedResult(r),
        lastError,
        sentAt: outcome === 'sent' ? now : undefined,
      })
      .where(and(eq(deliveries.id, row.id), eq(deliveries.status, 'sending'), eq(deliveries.attempts, row.attempts)))
      .returning({ id: deliveries.id });
    if (!updated.length) return { dispatched: 0, retryAt: null }; // another worker took the row after our lease ran out
    const attempt: Attempt = { tx, row, r, now };
    if (r.ok) return { dispatched: await destinationSent(attempt), retryAt: null };
    const failed = await destinationFailed(deps, attempt, outcome);
    return { dispatched: failed.dispatched, retryAt: failed.parked ? null : next };
  });
}

/** One settled attempt of a route delivery, inside the transaction that records it. */
interface Attempt {
  tx: Db;
  row: Claimed;
  r: SendResult;
  now: Date;
}

/** The subject and data of the delivery.* events of an attempt. */
function eventOf({ row, r }: Attempt) {
  return {
    subject: {
      delivery_id: row.id,
      submission_id: row.submission_id,
      route_id: row.route_id,
      destination_id: row.target_id,
      form_id: row.form_id,
    },
    data: { attempts: row.attempts, status_code: r.status_code, latency_ms: r.latency_ms, error: r.error },
  };
}

/** A sent attempt: the destination is healthy and verified, and `delivery.sent` is appended. */
async function destinationSent(a: Attempt): Promise<number> {
  await a.tx
    .update(destinations)
    .set({ health: 'ok', verified: true, consecutiveFailures: 0, failingSince: null })
    .where(eq(destinations.id, a.row.target_id));
  const { subject, data } = eventOf(a);
  return (await appendEvent(a.tx, { orgId: a.row.org_id, type: 'delivery.sent', subject, data, now: a.now }))
    .dispatched;
}

/**
 * A failed attempt: one more consecutive failure of the destination (which may disable it, see
 * disable.ts), `delivery.dead` when the delivery gave up, and `destination.failing` when the
 * failures reach FAILING_AFTER. Both alerts reach system webhooks at most once an hour per destination.
 */
async function destinationFailed(deps: Deps, a: Attempt, outcome: Outcome) {
  const { tx, row, r, now } = a;
  const [dest] = await tx
    .update(destinations)
    .set({
      consecutiveFailures: sql`${destinations.consecutiveFailures} + 1`,
      failingSince: failingSinceOnFailure(now, destinations.failingSince),
    })
    .where(eq(destinations.id, row.target_id))
    .returning();
  if (!dest) return { dispatched: 0, parked: false };
  const off = await afterDeliveryFailure(tx, deps, row, dest, r);
  let dispatched = off.dispatched;
  const quiet = (at: Date | null) => at !== null && now.getTime() - at.getTime() < ALERT_THROTTLE_MS;
  if (outcome === 'dead') {
    // Every death is in the log; only its fan-out is throttled.
    const throttled = quiet(dest.lastDeadEventAt);
    const { subject, data } = eventOf(a);
    const ev = await appendEvent(tx, {
      orgId: row.org_id,
      type: 'delivery.dead',
      subject,
      data: { ...data, throttled },
      now,
      fanOut: !throttled,
    });
    dispatched += ev.dispatched;
    if (!throttled) await tx.update(destinations).set({ lastDeadEventAt: now }).where(eq(destinations.id, dest.id));
  }
  if (dest.consecutiveFailures >= FAILING_AFTER && dest.health !== 'failing') {
    await tx.update(destinations).set({ health: 'failing' }).where(eq(destinations.id, dest.id));
    if (!quiet(dest.lastFailingEventAt)) {
      await tx.update(destinations).set({ lastFailingEventAt: now }).where(eq(destinations.id, dest.id));
      const ev = await appendEvent(tx, {
        orgId: row.org_id,
        type: 'destination.failing',
        subject: { destination_id: dest.id },
        data: { consecutive_failures: dest.consecutiveFailures, last_error: r.error },
        now,
      });
      dispatched += ev.dispatched;
    }
  }
  return { dispatched, parked: off.parked };
}

/** Records one attempt of a system-webhook delivery; system webhooks raise no events (no loops). */
export async function settleHookDelivery(deps: Deps, row: Claimed, r: SendResult): Promise<Date | null> {
  const now = deps.now();
  const outcome = outcomeOf(row, r);
  const next = retryAt(deps, row, r, outcome, now);
  return deps.database.db.transaction(async (tx) => {
    const updated = await tx
      .update(systemWebhookDeliveries)
      .set({
        status: outcome,
        nextAttemptAt: next,
        leaseUntil: null,
        lastResponse: storedResult(r),
        lastError: r.ok ? null : r.error,
        sentAt: outcome === 'sent' ? now : undefined,
      })
      .where(
        and(
          eq(systemWebhookDeliveries.id, row.id),
          eq(systemWebhookDeliveries.status, 'sending'),
          eq(systemWebhookDeliveries.attempts, row.attempts),
        ),
      )
      .returning({ id: systemWebhookDeliveries.id });
    if (!updated.length) return null;
    const [hook] = await tx
      .update(systemWebhooks)
      .set(
        r.ok
          ? { health: 'ok', consecutiveFailures: 0, failingSince: null }
          : {
              consecutiveFailures: sql`${systemWebhooks.consecutiveFailures} + 1`,
              health: sql`case when ${systemWebhooks.consecutiveFailures} + 1 >= ${FAILING_AFTER} then 'failing' else ${systemWebhooks.health} end`,
              failingSince: failingSinceOnFailure(now, systemWebhooks.failingSince),
            },
      )
      .where(eq(systemWebhooks.id, row.target_id))
      .returning();
    if (r.ok || !hook) return next;
    return (await afterHookFailure(tx, deps, row, hook, r)).parked ? null : next;
  });
}
