import type { Handoff } from '../core/deps.js';
import type { Database } from '../db/client.js';
import type { Claimed, SubmissionRow } from '../db/rows.js';
import { eventRow, hookDeliveryRows } from '../events.js';
import { intakeBatcher } from './batch.js';
import type { IntakeEntry } from './cache.js';
import type { planFromRoutes } from './plan.js';
import type { UniqueClaim } from './unique.js';

/** search_text is computed by the database (a generated column): intake never writes it. */
type Planned = ReturnType<typeof planFromRoutes>;

/** The submission.* event of a stored submission, in either write path. */
export function submissionEvent(
  type: string,
  row: Pick<SubmissionRow, 'id' | 'orgId' | 'formId' | 'status' | 'quarantineReason' | 'test' | 'receivedAt'>,
  planned: { id: string }[],
) {
  return {
    orgId: row.orgId,
    type,
    subject: { submission_id: row.id, form_id: row.formId },
    data: {
      status: row.status,
      quarantine_reason: row.quarantineReason,
      test: row.test,
      deliveries: planned.map((d) => d.id),
    },
    now: row.receivedAt,
  };
}

/** camelCase → snake_case of the few column names there are, each converted once. */
const snakeKeys = new Map<string, string>();

/** snake_case keys for jsonb_to_recordset (it matches JSON keys to the column names). */
function snake(row: Record<string, unknown>, skip?: string) {
  const out: Record<string, unknown> = {};
  for (const k in row) {
    if (k === skip) continue;
    let key = snakeKeys.get(k);
    if (key === undefined) {
      key = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      snakeKeys.set(k, key);
    }
    out[key] = row[k];
  }
  return out;
}

export type OneStatementResult = 'stored' | 'stale' | 'repeat' | 'claimed';

/**
 * Intake's common case in one statement, one round trip: the submission, its planned deliveries,
 * its event and the event's system-webhook deliveries, all or nothing, grouped with other
 * requests' writes when the database is busy (batch.ts). `stale` when the organization's
 * config_gen no longer equals the gen the caller decided with (cache.ts), `repeat` when the
 * idempotency key was taken (ON CONFLICT): either way nothing is written. `eventType` null appends
 * no event (spam). `unique`: settings.unique's claim of a received submission, taken in the same
 * statement; `claimed` when another submission holds it (nothing written: the caller stores it
 * through the transaction, as a duplicate). `pending`: deliveries left for a claim (the caller wakes the workers for them);
 * those handed off are queued in this process's worker.
 */
export async function writeInOneStatement(
  database: Database,
  entry: IntakeEntry,
  row: SubmissionRow,
  planned: Planned,
  eventType: 'submission.received' | 'submission.quarantined' | null,
  handoff?: Handoff,
  unique?: UniqueClaim | null,
): Promise<{ result: OneStatementResult; dispatched: number; pending: number }> {
  const { deliveryRows, claimed } = deliveryRowsOf(entry, row, planned, handoff);
  const event = eventType ? eventRow(submissionEvent(eventType, row, planned)) : null;
  const hooks = event && eventType ? hookDeliveryRows(entry.hooks[eventType], event) : [];
  const result = await intakeBatcher(database).write({
    submission: submissionRecord(row, entry.gen, unique ?? null),
    deliveries: deliveryRows,
    events: event ? [{ ...snake(event), sid: row.id }] : [],
    hooks: hooks.map((h) => ({ ...snake(h), sid: row.id })),
  });
  if (result !== 'stored') return { result, dispatched: 0, pending: 0 };
  if (claimed.length) handoff?.take(claimed);
  const pending = planned.filter((d) => d.status === 'pending').length - claimed.length;
  return { result: 'stored', dispatched: hooks.length, pending };
}

/** The submission row as the statement's JSON (snake_case), with the config gen it was decided with. */
function submissionRecord(row: SubmissionRow, gen: IntakeEntry['gen'], unique: UniqueClaim | null) {
  return {
    id: row.id,
    org_id: row.orgId,
    form_id: row.formId,
    status: row.status,
    quarantine_reason: row.quarantineReason,
    test: row.test,
    data: row.data,
    form_schema_version: row.formSchemaVersion,
    issues: row.issues,
    spam: row.spam,
    meta: row.meta,
    client_ip: row.clientIp,
    idempotency_key: row.idempotencyKey,
    subject_hint: row.subjectHint,
    received_at: row.receivedAt,
    gen,
    unique_key: unique?.key ?? null,
    unique_expires: unique?.expiresAt ?? null,
  };
}

/**
 * The planned deliveries as the statement's rows. Pending ones this process's worker has room for
 * are written claimed (see Handoff): `sending`, their first attempt counted, with a lease, and
 * returned in `claimed` to be handed to the worker once the statement commits.
 */
function deliveryRowsOf(entry: IntakeEntry, row: SubmissionRow, planned: Planned, handoff?: Handoff) {
  const lease = handoff ? new Date(row.receivedAt.getTime() + handoff.leaseMs) : null;
  const wanted = new Map<string, number>();
  const claimed: Claimed[] = [];
  // An instant payload holds the submission's own data and meta (planFromRoutes puts these very
  // objects in it): the statement builds it from the submission row rather than parse them twice.
  // One object per row (the hot path): the planned delivery's columns, its type left out.
  const rowOf = (d: Planned[number], attempts: number, leaseUntil: Date | null) => {
    const p = d.payload as Record<string, unknown>;
    const out = snake(d, 'destinationType');
    if (p.stream === null && p.data === row.data && p.meta === row.meta) {
      out.payload = null;
      out.form_slug = entry.form.slug;
      out.received = row.receivedAt.toISOString();
    }
    out.attempts = attempts;
    out.lease_until = leaseUntil;
    return out;
  };
  const deliveryRows = planned.map((d) => {
    const n = wanted.get(d.destinationId) ?? 0;
    if (d.status !== 'pending' || !d.nextAttemptAt || !handoff || !lease || handoff.room(d.destinationId) <= n) {
      return rowOf(d, 0, null);
    }
    wanted.set(d.destinationId, n + 1);
    claimed.push({
      id: d.id,
      org_id: d.orgId,
      target_id: d.destinationId,
      attempts: 1,
      max_attempts: d.maxAttempts,
      payload: d.payload,
      event_type: 'submission.received',
      submission_id: d.submissionId,
      form_id: d.formId,
      route_id: d.routeId,
      type: d.destinationType,
      lease_until: lease,
    });
    const claimedRow = rowOf(d, 1, lease);
    claimedRow.status = 'sending';
    return claimedRow;
  });
  return { deliveryRows, claimed };
}
