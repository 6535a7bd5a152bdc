import { notInArray, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { deliveries, systemWebhookDeliveries } from '../db/schema.js';

/** A claimed row: marked `sending` with a lease, its attempt already counted. */
export interface Claimed {
  id: string;
  org_id: string;
  /** destination id for deliveries, webhook id for system-webhook deliveries */
  target_id: string;
  attempts: number;
  max_attempts: number;
  payload: Record<string, unknown>;
  event_type: string;
  submission_id: string | null;
  form_id: string | null;
  route_id: string | null;
}

/**
 * Claims up to `limit` due deliveries: pending or failed ones whose next attempt is due, and
 * `sending` ones whose lease ran out (their worker died). FOR UPDATE SKIP LOCKED lets any number
 * of workers claim at once without taking the same row; at most `perTarget` rows per destination
 * are taken in one claim, and destinations already at their limit in this process are left out.
 */
export async function claimDeliveries(
  database: Database,
  opts: { now: Date; limit: number; perTarget: number; busy: string[]; leaseMs: number },
): Promise<Claimed[]> {
  const d = deliveries;
  // ISO strings: postgres.js does not serialize a Date inside a raw statement.
  const now = opts.now.toISOString();
  const lease = new Date(opts.now.getTime() + opts.leaseMs).toISOString();
  const busy: SQL = opts.busy.length ? sql`and ${notInArray(d.destinationId, opts.busy)}` : sql``;
  const rows = await database.rows<Claimed>(sql`
    with ranked as (
      select id, row_number() over (partition by destination_id order by next_attempt_at, id) as rn
      from deliveries
      where ((status in ('pending', 'failed') and next_attempt_at <= ${now}::timestamptz)
          or (status = 'sending' and lease_until < ${now}::timestamptz)) ${busy}
      order by next_attempt_at, id
      limit ${opts.limit * 4}
    ), due as (
      select d.id from deliveries d join ranked r on r.id = d.id
      where r.rn <= ${opts.perTarget}
        and ((d.status in ('pending', 'failed') and d.next_attempt_at <= ${now}::timestamptz)
          or (d.status = 'sending' and d.lease_until < ${now}::timestamptz))
      order by d.next_attempt_at, d.id
      limit ${opts.limit}
      for update of d skip locked
    )
    update deliveries set status = 'sending', attempts = deliveries.attempts + 1,
      lease_until = ${lease}::timestamptz
    from due where deliveries.id = due.id
    returning deliveries.id, deliveries.org_id, deliveries.destination_id as target_id, deliveries.attempts,
      deliveries.max_attempts, deliveries.payload, deliveries.event_type, deliveries.submission_id,
      deliveries.form_id, deliveries.route_id`);
  return rows.map(normalize);
}

/** The same claim for system-webhook deliveries (target = the webhook). */
export async function claimHookDeliveries(
  database: Database,
  opts: { now: Date; limit: number; perTarget: number; busy: string[]; leaseMs: number },
): Promise<Claimed[]> {
  const w = systemWebhookDeliveries;
  const now = opts.now.toISOString();
  const lease = new Date(opts.now.getTime() + opts.leaseMs).toISOString();
  const busy: SQL = opts.busy.length ? sql`and ${notInArray(w.webhookId, opts.busy)}` : sql``;
  const rows = await database.rows<Claimed>(sql`
    with ranked as (
      select id, row_number() over (partition by webhook_id order by next_attempt_at, id) as rn
      from system_webhook_deliveries
      where ((status in ('pending', 'failed') and next_attempt_at <= ${now}::timestamptz)
          or (status = 'sending' and lease_until < ${now}::timestamptz)) ${busy}
      order by next_attempt_at, id
      limit ${opts.limit * 4}
    ), due as (
      select d.id from system_webhook_deliveries d join ranked r on r.id = d.id
      where r.rn <= ${opts.perTarget}
        and ((d.status in ('pending', 'failed') and d.next_attempt_at <= ${now}::timestamptz)
          or (d.status = 'sending' and d.lease_until < ${now}::timestamptz))
      order by d.next_attempt_at, d.id
      limit ${opts.limit}
      for update of d skip locked
    )
    update system_webhook_deliveries set status = 'sending', attempts = system_webhook_deliveries.attempts + 1,
      lease_until = ${lease}::timestamptz
    from due where system_webhook_deliveries.id = due.id
    returning system_webhook_deliveries.id, system_webhook_deliveries.org_id,
      system_webhook_deliveries.webhook_id as target_id, system_webhook_deliveries.attempts,
      system_webhook_deliveries.max_attempts, system_webhook_deliveries.payload,
      system_webhook_deliveries.event_type, null as submission_id, null as form_id, null as route_id`);
  return rows.map(normalize);
}

/** postgres.js and PGlite agree on most types; numbers are made numbers, jsonb parsed. */
function normalize(r: Claimed): Claimed {
  return {
    ...r,
    attempts: Number(r.attempts),
    max_attempts: Number(r.max_attempts),
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
  };
}
