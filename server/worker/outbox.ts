import { deliveries, destinations, systemWebhookDeliveries, systemWebhooks } from '../db/schema.js';

/** The two outboxes: route deliveries (target = destination) and system-webhook deliveries (target = webhook). */
export type OutboxKind = 'delivery' | 'hook';

/**
 * What one outbox is, as data: one claim, settle, disable, replay and release path moves the rows
 * of both (docs/delivery-internals.md), reading here where they differ. The drizzle tables are
 * typed as the route-delivery ones: the shared paths use only the columns both tables have under
 * the same names (rows: id, org_id, status, attempts, next_attempt_at, lease_until, last_response,
 * last_error, sent_at, created_at; targets: id, org_id, enabled, disabled_reason, health,
 * consecutive_failures, failing_since), and the destination-only ones only where a flag says so.
 */
export interface Outbox {
  kind: OutboxKind;
  /** the rows' table, by name (prepared statements) and as drizzle's */
  table: string;
  rows: typeof deliveries;
  /** the column of a row naming its target */
  targetColumn: string;
  rowTarget: typeof deliveries.destinationId;
  /** the targets' table, by name and as drizzle's */
  targetTable: string;
  targets: typeof destinations;
  /** the candidate function of the claim (migration 0009) */
  candidates: string;
  /** the columns a claim returns besides id, org_id, target_id, attempts, max_attempts, payload */
  claimColumns: string;
  /** the subject key naming the target in its events */
  subjectKey: 'destination_id' | 'webhook_id';
  /** the event appended when the target is switched off after failures */
  disabledEvent: 'destination.disabled' | 'webhook.disabled';
  /**
   * Whether attempts raise `delivery.sent`, `delivery.dead` and `destination.failing`. System
   * webhooks raise none: an event about a system-webhook delivery would be sent to system webhooks,
   * a loop.
   */
  events: boolean;
  /** whether a success marks the target verified */
  verifies: boolean;
  /** the target's type (its delivery policy; a 410 disables a webhook at once) */
  targetType: (target: { type?: string }) => string;
  /** why a claimed row has nothing to send (its target was deleted, or disabled) */
  gone: string;
}

const hookRows = systemWebhookDeliveries as unknown as typeof deliveries;
const hookTargets = systemWebhooks as unknown as typeof destinations;

export const OUTBOX: Record<OutboxKind, Outbox> = {
  delivery: {
    kind: 'delivery',
    table: 'deliveries',
    rows: deliveries,
    targetColumn: 'destination_id',
    rowTarget: deliveries.destinationId,
    targetTable: 'destinations',
    targets: destinations,
    candidates: 'claim_candidates_deliveries',
    // The destination's type travels with the row (its delivery policy), looked up by primary key.
    claimColumns:
      "t.event_type, t.submission_id, t.form_id, t.route_id, case when t.destination_id = 'submitter' then 'submitter' else (select x.type from destinations x where x.id = t.destination_id) end as type",
    subjectKey: 'destination_id',
    disabledEvent: 'destination.disabled',
    events: true,
    verifies: true,
    targetType: (t) => t.type ?? 'webhook',
    gone: 'the destination was deleted',
  },
  hook: {
    kind: 'hook',
    table: 'system_webhook_deliveries',
    rows: hookRows,
    targetColumn: 'webhook_id',
    rowTarget: systemWebhookDeliveries.webhookId as unknown as typeof deliveries.destinationId,
    targetTable: 'system_webhooks',
    targets: hookTargets,
    candidates: 'claim_candidates_hooks',
    claimColumns:
      "t.event_type, null::text as submission_id, null::text as form_id, null::text as route_id, 'webhook'::text as type",
    subjectKey: 'webhook_id',
    disabledEvent: 'webhook.disabled',
    events: false,
    verifies: false,
    targetType: () => 'webhook',
    gone: 'the system webhook was deleted or disabled',
  },
};

/** Both outboxes, in the order a round of claims takes them. */
export const OUTBOX_KINDS = Object.keys(OUTBOX) as OutboxKind[];
