import type { z } from '../../shared/contracts/common.js';
import type { SystemWebhook, SystemWebhookDelivery } from '../../shared/contracts/webhooks.js';
import type { SystemWebhookDeliveryRow, SystemWebhookRow } from '../db/rows.js';
import { presentResult } from './deliveries.js';

export type SystemWebhookOut = z.output<typeof SystemWebhook>;
export type SystemWebhookDeliveryOut = z.output<typeof SystemWebhookDelivery>;

/** Row → wire SystemWebhook: the secret never leaves, only whether one is set. */
export function presentWebhook(w: SystemWebhookRow): SystemWebhookOut {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    enabled: w.enabled,
    disabled_reason: w.disabledReason,
    failing_since: w.failingSince?.toISOString() ?? null,
    health: w.health as SystemWebhookOut['health'],
    has_secret: w.secret !== null,
    created_at: w.createdAt.toISOString(),
  };
}

export function presentWebhookDelivery(d: SystemWebhookDeliveryRow): SystemWebhookDeliveryOut {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status as SystemWebhookDeliveryOut['status'],
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    payload: d.payload,
    last_response: presentResult(d.lastResponse),
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    sent_at: d.sentAt?.toISOString() ?? null,
  };
}
