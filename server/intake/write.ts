import type { Database } from '../db/client.js';
import type { submissions } from '../db/schema.js';
import { eventRow, hookDeliveryRows } from '../events.js';
import type { Handoff } from '../http/context.js';
import type { Claimed } from '../worker/claim.js';
import type { IntakeEntry } from './cache.js';
import type { planFromRoutes } from './plan.js';

type SubmissionRow = typeof submissions.$inferSelect;
type Planned = ReturnType<typeof planFromRoutes>;

/**
 * Intake's common case in one statement, one round trip: the submission, its planned deliveries,
 * its event and the event's system-webhook deliveries, all or nothing. The first CTE reads the
 * organization's config_gen; nothing is inserted unless it still equals the gen the caller decided
 * with (see cache.ts). A repeat of an idempotency key inserts nothing either (ON CONFLICT). The
 * rows other than the submission come as one JSON array each, so the text never changes and the
 * statement is prepared once per connection.
 */
const STATEMENT = `
with g as (select config_gen from organizations where id = $1::text),
s as (
  insert into submissions (id, org_id, form_id, status, quarantine_reason, test, data, form_schema_version,
    issues, spam, meta, client_ip, idempotency_key, subject_hint, received_at)
  select $2::text, $1::text, $3::text, $4::text, $5::text, $6::text::boolean, $7::text::jsonb, $8::text::integer,
    $9::text::jsonb, $10::text::jsonb, $11::text::jsonb, $12::text, $13::text, $14::text, $15::text::timestamptz
  from g where g.config_gen = $16::text::bigint
  on conflict (form_id, idempotency_key) where idempotency_key is not null do nothing
  returning id
),
d as (
  insert into deliveries (id, org_id, submission_id, route_id, destination_id, form_id, status, skip_reason,
    attempts, max_attempts, next_attempt_at, lease_until, schema_version, payload, created_at)
  select x.id, x.org_id, x.submission_id, x.route_id, x.destination_id, x.form_id, x.status, x.skip_reason,
    x.attempts, x.max_attempts, x.next_attempt_at, x.lease_until, x.schema_version, x.payload, x.created_at
  from jsonb_to_recordset($17::text::jsonb) as x(id text, org_id text, submission_id text, route_id text,
    destination_id text, form_id text, status text, skip_reason text, attempts integer, max_attempts integer,
    next_attempt_at timestamptz, lease_until timestamptz, schema_version integer, payload jsonb,
    created_at timestamptz)
  where exists (select 1 from s)
),
e as (
  insert into events (id, org_id, type, subject, data, created_at)
  select x.id, x.org_id, x.type, x.subject, x.data, x.created_at
  from jsonb_to_recordset($18::text::jsonb) as x(id text, org_id text, type text, subject jsonb, data jsonb,
    created_at timestamptz)
  where exists (select 1 from s)
),
h as (
  insert into system_webhook_deliveries (id, org_id, webhook_id, event_id, event_type, status, max_attempts,
    next_attempt_at, payload, created_at)
  select x.id, x.org_id, x.webhook_id, x.event_id, x.event_type, x.status, x.max_attempts, x.next_attempt_at,
    x.payload, x.created_at
  from jsonb_to_recordset($19::text::jsonb) as x(id text, org_id text, webhook_id text, event_id text,
    event_type text, status text, max_attempts integer, next_attempt_at timestamptz, payload jsonb,
    created_at timestamptz)
  where exists (select 1 from s)
)
select (select config_gen from g)::text as gen, (select count(*) from s)::int as stored`;

/** snake_case keys for jsonb_to_recordset (it matches JSON keys to the column names). */
function snake(row: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return out;
}

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export type OneStatementResult = 'stored' | 'stale' | 'repeat';

/**
 * Writes a decided submission with its deliveries and event in one statement. `stale` when the
 * organization's config_gen moved (nothing written), `repeat` when its idempotency key was taken.
 * `eventType` null appends no event (spam). `pending`: deliveries left for a claim (the caller
 * wakes the workers for them); those handed off are queued in this process's worker.
 */
export async function writeInOneStatement(
  database: Database,
  entry: IntakeEntry,
  row: SubmissionRow,
  planned: Planned,
  eventType: 'submission.received' | 'submission.quarantined' | null,
  handoff?: Handoff,
): Promise<{ result: OneStatementResult; dispatched: number; pending: number }> {
  // Pending deliveries this process's worker has room for are written claimed (see Handoff).
  const lease = handoff ? new Date(row.receivedAt.getTime() + handoff.leaseMs) : null;
  const wanted = new Map<string, number>();
  const claimed: Claimed[] = [];
  const deliveryRows = planned.map((d) => {
    const n = wanted.get(d.destinationId) ?? 0;
    if (d.status !== 'pending' || !handoff || handoff.room(d.destinationId) <= n) {
      return { ...snake(d), attempts: 0, lease_until: null };
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
      lease_until: lease as Date,
    });
    return { ...snake(d), status: 'sending', attempts: 1, lease_until: lease };
  });
  const event = eventType
    ? eventRow({
        orgId: row.orgId,
        type: eventType,
        subject: { submission_id: row.id, form_id: row.formId },
        data: {
          status: row.status,
          quarantine_reason: row.quarantineReason,
          test: row.test,
          deliveries: planned.map((d) => d.id),
        },
        now: row.receivedAt,
      })
    : null;
  const hooks = event && eventType ? hookDeliveryRows(entry.hooks[eventType], event) : [];
  const [out] = await database.prepared<{ gen: string | null; stored: number }>(STATEMENT, [
    row.orgId,
    row.id,
    row.formId,
    row.status,
    row.quarantineReason,
    String(row.test),
    json(row.data),
    row.formSchemaVersion === null ? null : String(row.formSchemaVersion),
    json(row.issues),
    json(row.spam),
    json(row.meta),
    row.clientIp,
    row.idempotencyKey,
    row.subjectHint,
    row.receivedAt.toISOString(),
    String(entry.gen),
    JSON.stringify(deliveryRows),
    JSON.stringify(event ? [snake(event)] : []),
    JSON.stringify(hooks.map(snake)),
  ]);
  if (out.gen === null || Number(out.gen) !== entry.gen) return { result: 'stale', dispatched: 0, pending: 0 };
  if (!Number(out.stored)) return { result: 'repeat', dispatched: 0, pending: 0 };
  if (claimed.length) handoff?.take(claimed);
  const pending = planned.filter((d) => d.status === 'pending').length - claimed.length;
  return { result: 'stored', dispatched: hooks.length, pending };
}
