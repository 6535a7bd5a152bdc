import { and, eq, gt, sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import type { Claimed, DestinationRow } from '../db/rows.js';
import { deliveryAttempts, destinations, events } from '../db/schema.js';
import { appendEvent } from '../events.js';
import { afterFailure, failingSinceOnFailure } from './disable.js';
import { OUTBOX, type OutboxKind } from './outbox.js';
import { type DeliveryPolicy, isFinal, policyOf } from './policy.js';
import { SUBMITTER_TARGET } from './submitter-target.js';
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
 * Records one attempt of either outbox in one transaction: the row (guarded on the attempt it
 * claimed, so a worker whose lease ran out cannot overwrite a newer attempt), its target's health
 * (and verified flag, for destinations), and for route deliveries the events `delivery.sent`,
 * `delivery.dead` and `destination.failing`. Answers how many events were fanned out to system
 * webhooks, and when the row is tried again.
 */
export async function settleAttempt(
  deps: Deps,
  kind: OutboxKind,
  row: Claimed,
  r: SendResult,
): Promise<{ dispatched: number; retryAt: Date | null }> {
  const { rows } = OUTBOX[kind];
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
      .update(rows)
      .set({
        status: outcome,
        nextAttemptAt: next,
        leaseUntil: null,
        lastResponse: storedResult(r),
        lastError,
        sentAt: outcome === 'sent' ? now : undefined,
      })
      .where(and(eq(rows.id, row.id), eq(rows.status, 'sending'), eq(rows.attempts, row.attempts)))
      .returning({ id: rows.id });
    if (!updated.length) return { dispatched: 0, retryAt: null }; // another worker took the row after our lease ran out
    // A success is recorded by the row itself (sent_at, last_response; attempts.ts), a failure by an attempt row.
    if (kind === 'delivery' && outcome !== 'sent')
      await tx.insert(deliveryAttempts).values(attemptRow(row, r, now, next, outcome, lastError));
    const attempt: Attempt = { tx, kind, row, r, now };
    if (r.ok) return { dispatched: await targetSent(attempt), retryAt: null };
    const failed = await targetFailed(deps, attempt, outcome);
    return { dispatched: failed.dispatched, retryAt: failed.parked ? null : next };
  });
}

/** The delivery_attempts row of one settled attempt (explain reads them); it started latency_ms before `at`. */
export function attemptRow(
  row: Claimed,
  r: SendResult,
  at: Date,
  next: Date | null,
  outcome: Outcome,
  error: string | null,
) {
  return {
    orgId: row.org_id,
    deliveryId: row.id,
    n: row.attempts,
    startedAt: new Date(at.getTime() - Math.max(0, Math.round(r.latency_ms))),
    latencyMs: Math.max(0, Math.round(r.latency_ms)),
    statusCode: r.status_code,
    error: error?.slice(0, 500) ?? null,
    nextAttemptAt: next,
    outcome,
  };
}

/** One settled attempt, inside the transaction that records it. */
interface Attempt {
  tx: Db;
  kind: OutboxKind;
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

/** A sent attempt: the target is healthy (and verified), and `delivery.sent` is appended where the outbox raises events. */
async function targetSent(a: Attempt): Promise<number> {
  const { targets, verifies, events } = OUTBOX[a.kind];
  await a.tx
    .update(targets)
    .set({ health: 'ok', consecutiveFailures: 0, failingSince: null, ...(verifies ? { verified: true } : {}) })
    .where(eq(targets.id, a.row.target_id));
  if (!events) return 0;
  const { subject, data } = eventOf(a);
  return (await appendEvent(a.tx, { orgId: a.row.org_id, type: 'delivery.sent', subject, data, now: a.now }))
    .dispatched;
}

/**
 * A failed attempt: one more consecutive failure of the target (which may disable it, see
 * disable.ts), and `failing` health when the failures reach FAILING_AFTER. Where the outbox raises
 * events, `delivery.dead` when the delivery gave up and `destination.failing` with that health;
 * both alerts reach system webhooks at most once an hour per destination.
 */
async function targetFailed(deps: Deps, a: Attempt, outcome: Outcome) {
  const { tx, kind, row, r, now } = a;
  const { targets, events } = OUTBOX[kind];
  const [target] = await tx
    .update(targets)
    .set({
      consecutiveFailures: sql`${targets.consecutiveFailures} + 1`,
      failingSince: failingSinceOnFailure(now, targets.failingSince),
    })
    .where(eq(targets.id, row.target_id))
    .returning();
  if (!target) return { dispatched: events && outcome === 'dead' ? await builtInDeadEvent(a) : 0, parked: false };
  const off = await afterFailure(tx, deps, kind, row, target, r);
  let dispatched = off.dispatched;
  if (events && outcome === 'dead') dispatched += await deadEvent(a, target);
  if (target.consecutiveFailures >= FAILING_AFTER && target.health !== 'failing') {
    await tx.update(targets).set({ health: 'failing' }).where(eq(targets.id, target.id));
    if (events) dispatched += await failingEvent(a, target);
  }
  return { dispatched, parked: off.parked };
}

const quiet = (now: Date, at: Date | null) => at !== null && now.getTime() - at.getTime() < ALERT_THROTTLE_MS;

/** `delivery.dead`: every death is in the log; only its fan-out is throttled. */
async function deadEvent(a: Attempt, dest: DestinationRow) {
  const { tx, row, now } = a;
  const throttled = quiet(now, dest.lastDeadEventAt);
  const { subject, data } = eventOf(a);
  const ev = await appendEvent(tx, {
    orgId: row.org_id,
    type: 'delivery.dead',
    subject,
    data: { ...data, throttled },
    now,
    fanOut: !throttled,
  });
  if (!throttled) await tx.update(destinations).set({ lastDeadEventAt: now }).where(eq(destinations.id, dest.id));
  return ev.dispatched;
}

/**
 * `delivery.dead` of mail to a submitter (the built-in target: no destinations row to count its
 * failures or remember its last alert), with the same subject (destination_id "submitter") and
 * data naming the target and the kind of mail. Its fan-out is throttled like a destination's, at
 * most once an hour per organization, read from the log: a dead mail to a submitter is rare (a
 * refused address dies at once), and a form's bad addresses must not flood system webhooks.
 */
async function builtInDeadEvent(a: Attempt) {
  const { tx, row, now } = a;
  if (row.target_id !== SUBMITTER_TARGET) return 0;
  const since = new Date(now.getTime() - ALERT_THROTTLE_MS);
  const recent = await tx
    .select({ id: events.id })
    .from(events)
    .where(
      and(
        eq(events.orgId, row.org_id),
        eq(events.type, 'delivery.dead'),
        gt(events.createdAt, since),
        sql`${events.subject}->>'destination_id' = ${SUBMITTER_TARGET}`,
        sql`${events.data}->>'throttled' = 'false'`,
      ),
    )
    .limit(1);
  const throttled = recent.length > 0;
  const { subject, data } = eventOf(a);
  const ev = await appendEvent(tx, {
    orgId: row.org_id,
    type: 'delivery.dead',
    subject,
    data: { ...data, target: SUBMITTER_TARGET, kind: row.route_id, throttled },
    now,
    fanOut: !throttled,
  });
  return ev.dispatched;
}

/** `destination.failing`, at most once an hour per destination. */
async function failingEvent(a: Attempt, dest: DestinationRow) {
  const { tx, row, r, now } = a;
  if (quiet(now, dest.lastFailingEventAt)) return 0;
  await tx.update(destinations).set({ lastFailingEventAt: now }).where(eq(destinations.id, dest.id));
  const ev = await appendEvent(tx, {
    orgId: row.org_id,
    type: 'destination.failing',
    subject: { destination_id: dest.id },
    data: { consecutive_failures: dest.consecutiveFailures, last_error: r.error },
    now,
  });
  return ev.dispatched;
}
