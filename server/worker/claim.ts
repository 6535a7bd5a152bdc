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

export interface ClaimOptions {
  now: Date;
  limit: number;
  perTarget: number;
  /** targets already at their limit in this process */
  busy: string[];
  leaseMs: number;
}

/** The two outboxes: route deliveries (target = destination) and system-webhook deliveries (target = webhook). */
const OUTBOXES = {
  delivery: {
    name: 'deliveries',
    target: sql.raw('destination_id'),
    targetColumn: deliveries.destinationId,
    extra: sql.raw('t.event_type, t.submission_id, t.form_id, t.route_id'),
  },
  hook: {
    name: 'system_webhook_deliveries',
    target: sql.raw('webhook_id'),
    targetColumn: systemWebhookDeliveries.webhookId,
    extra: sql.raw('t.event_type, null as submission_id, null as form_id, null as route_id'),
  },
};

/**
 * Claims up to `limit` due rows of one outbox: pending or failed ones whose next attempt is due, and
 * `sending` ones whose lease ran out (their worker died). FOR UPDATE SKIP LOCKED lets any number of
 * workers claim at once without taking the same row; at most `perTarget` rows per destination (or
 * webhook) are taken in one claim, and targets already at their limit in this process are left out.
 */
export async function claim(database: Database, kind: keyof typeof OUTBOXES, opts: ClaimOptions): Promise<Claimed[]> {
  const o = OUTBOXES[kind];
  const table = sql.raw(o.name);
  // ISO strings: postgres.js does not serialize a Date inside a raw statement.
  const now = opts.now.toISOString();
  const lease = new Date(opts.now.getTime() + opts.leaseMs).toISOString();
  const busy: SQL = opts.busy.length ? sql`and ${notInArray(o.targetColumn, opts.busy)}` : sql``;
  const due = (alias: string) => {
    const a = sql.raw(alias);
    return sql`((${a}.status in ('pending', 'failed') and ${a}.next_attempt_at <= ${now}::timestamptz)
      or (${a}.status = 'sending' and ${a}.lease_until < ${now}::timestamptz))`;
  };
  const rows = await database.rows<Claimed>(sql`
    with ranked as (
      select id, row_number() over (partition by ${o.target} order by next_attempt_at, id) as rn
      from ${table}
      where ${due(o.name)} ${busy}
      order by next_attempt_at, id
      limit ${opts.limit * 4}
    ), picked as (
      select d.id from ${table} d join ranked r on r.id = d.id
      where r.rn <= ${opts.perTarget} and ${due('d')}
      order by d.next_attempt_at, d.id
      limit ${opts.limit}
      for update of d skip locked
    )
    update ${table} t set status = 'sending', attempts = t.attempts + 1, lease_until = ${lease}::timestamptz
    from picked where t.id = picked.id
    returning t.id, t.org_id, t.${o.target} as target_id, t.attempts, t.max_attempts, t.payload, ${o.extra}`);
  return rows.map((r) => ({
    ...r,
    attempts: Number(r.attempts),
    max_attempts: Number(r.max_attempts),
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
  }));
}
