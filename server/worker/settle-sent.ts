import { newId } from '../../shared/ids.js';
import type { Deps } from '../core/deps.js';
import type { Claimed } from '../db/rows.js';
import { SYSTEM_WEBHOOK_MAX_ATTEMPTS } from '../events.js';
import { presentEvent } from '../present/events.js';
import { OUTBOX, OUTBOX_KINDS, type Outbox, type OutboxKind } from './outbox.js';
import { storedResult } from './settle.js';
import type { SendResult } from './types.js';

/** One finished attempt waiting to be recorded: the claimed row, what the send came to, and when. */
export interface Attempt {
  kind: OutboxKind;
  row: Claimed;
  result: SendResult;
  at: Date;
}

/**
 * Successful attempts of one outbox in one statement: each row becomes `sent` (guarded on the
 * attempt it claimed, as settleAttempt does), its target reads healthy (and verified, for
 * destinations; written only when it did not already), and, where the outbox raises events, each
 * settled row appends its `delivery.sent` event and the system-webhook deliveries subscribed to it.
 * Rows another worker took over are left alone, and so are their event and its fan-out.
 * A successful attempt writes no delivery_attempts row: the settled row itself (`attempts`,
 * `sent_at`, `last_response`) is its record, which explain reads (attempts.ts).
 *
 * $1 [{id, attempts, response, at}] (with event_id, subject, data where the outbox raises
 * events), $2 [{id, org_id, webhook_id, event_id, at, payload}] (one per event and subscribed
 * webhook), $3 max attempts of those.
 */
function sentText(o: Outbox) {
  const ev = o.events ? ', event_id text, subject jsonb, data jsonb' : '';
  const evCols = o.events ? ', v.event_id, v.subject, v.data' : '';
  const verified = o.verifies ? ', verified = true' : '';
  const unverified = o.verifies ? ' or not verified' : '';
  const events = o.events
    ? `, ev as (
    insert into events (id, org_id, type, subject, data, created_at)
    select event_id, org_id, 'delivery.sent', subject, data, at from upd
  ), hk as (
    insert into system_webhook_deliveries
      (id, org_id, webhook_id, event_id, event_type, status, max_attempts, next_attempt_at, payload, created_at)
    select h.id, h.org_id, h.webhook_id, h.event_id, 'delivery.sent', 'pending', $3::int, h.at, h.payload, h.at
    from jsonb_to_recordset($2::jsonb)
      as h(id text, org_id text, webhook_id text, event_id text, at timestamptz, payload jsonb)
    where h.event_id in (select event_id from upd)
    returning 1
  )`
    : '';
  return `with v as (
    select * from jsonb_to_recordset($1::jsonb) as v(id text, attempts int, response jsonb, at timestamptz${ev})
  ), upd as (
    update ${o.table} d set status = 'sent', next_attempt_at = null, lease_until = null,
      last_response = v.response, last_error = null, sent_at = v.at
    from v where d.id = v.id and d.status = 'sending' and d.attempts = v.attempts
    returning d.id, d.org_id, d.${o.targetColumn} as target_id, v.at${evCols}
  ), tgt as (
    update ${o.targetTable} set health = 'ok'${verified}, consecutive_failures = 0, failing_since = null
    where id in (select target_id from upd)
      and (health <> 'ok'${unverified} or consecutive_failures <> 0 or failing_since is not null)
  )${events}
  select (select count(*) from upd)::int as settled, ${o.events ? '(select count(*) from hk)::int' : '0'} as dispatched`;
}

const SENT = Object.fromEntries(OUTBOX_KINDS.map((k) => [k, sentText(OUTBOX[k])])) as Record<OutboxKind, string>;

/**
 * Records many successful attempts of one outbox at once: one statement (two for route
 * deliveries, whose `delivery.sent` events may fan out to system webhooks) instead of a
 * transaction per attempt. Failures are not batched: each one goes through settleAttempt (backoff,
 * dead, target health and its alerts).
 * Returns how many rows were settled and how many system-webhook deliveries were planned.
 */
export async function settleSent(
  deps: Deps,
  kind: OutboxKind,
  done: Attempt[],
): Promise<{ settled: number; dispatched: number }> {
  if (!done.length) return { settled: 0, dispatched: 0 };
  const { database } = deps;
  const base = (a: Attempt) => ({
    id: a.row.id,
    attempts: a.row.attempts,
    response: storedResult(a.result),
    at: a.at.toISOString(),
  });
  let rows: { settled: number; dispatched: number }[];
  if (!OUTBOX[kind].events) {
    rows = await database.prepared(SENT[kind], [JSON.stringify(done.map(base))]);
  } else {
    const events = done.map((a) => ({ ...base(a), ...sentEvent(a), org_id: a.row.org_id }));
    const hooks = await subscribed(deps, [...new Set(done.map((a) => a.row.org_id))]);
    const fanOut = events.flatMap((e) =>
      (hooks.get(e.org_id) ?? []).map((webhookId) => ({
        id: newId('webhookDelivery'),
        org_id: e.org_id,
        webhook_id: webhookId,
        event_id: e.event_id,
        at: e.at,
        payload: presentEvent({
          id: e.event_id,
          orgId: e.org_id,
          type: 'delivery.sent',
          subject: e.subject,
          data: e.data,
          createdAt: new Date(e.at),
        }),
      })),
    );
    rows = await database.prepared(SENT[kind], [
      JSON.stringify(events.map(({ org_id: _org, ...e }) => e)),
      JSON.stringify(fanOut),
      String(SYSTEM_WEBHOOK_MAX_ATTEMPTS),
    ]);
  }
  const [r] = rows;
  return { settled: Number(r?.settled ?? 0), dispatched: Number(r?.dispatched ?? 0) };
}

/** The `delivery.sent` event of one successful attempt: a new id, its subject and data. */
function sentEvent(a: Attempt) {
  return {
    event_id: newId('event'),
    subject: {
      delivery_id: a.row.id,
      submission_id: a.row.submission_id,
      route_id: a.row.route_id,
      destination_id: a.row.target_id,
      form_id: a.row.form_id,
    },
    data: { attempts: a.row.attempts, status_code: a.result.status_code, latency_ms: a.result.latency_ms, error: null },
  };
}

const SUBSCRIBED = `select id, org_id from system_webhooks
  where org_id = any (array(select jsonb_array_elements_text($1::jsonb)))
    and enabled and events @> array['delivery.sent']`;

/** Enabled system webhooks subscribed to `delivery.sent`, per organization. */
async function subscribed(deps: Deps, orgIds: string[]): Promise<Map<string, string[]>> {
  const hooks = await deps.database.prepared<{ id: string; org_id: string }>(SUBSCRIBED, [JSON.stringify(orgIds)]);
  const out = new Map<string, string[]>();
  for (const h of hooks) out.set(h.org_id, [...(out.get(h.org_id) ?? []), h.id]);
  return out;
}
