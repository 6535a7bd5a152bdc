import { and, arrayContains, eq } from 'drizzle-orm';
import { newId } from '../shared/ids.js';
import type { Db } from './db/client.js';
import { events, systemWebhookDeliveries, systemWebhooks } from './db/schema.js';
import { presentEvent } from './present/events.js';

/** System webhooks get as many attempts as webhook destinations. */
export const SYSTEM_WEBHOOK_MAX_ATTEMPTS = 10;

export interface EventInput {
  orgId: string;
  type: string;
  subject: Record<string, unknown>;
  data: Record<string, unknown>;
  now: Date;
  /** false: only the log gets it (a throttled alert); default true. */
  fanOut?: boolean;
}

/** The log row of an event, built in memory (intake writes it within its one statement). */
export function eventRow(input: EventInput): typeof events.$inferSelect {
  return {
    id: newId('event'),
    orgId: input.orgId,
    type: input.type,
    subject: input.subject,
    data: input.data,
    createdAt: input.now,
  };
}

/** The enabled system webhooks of an organization subscribed to an event type. */
async function subscribedHooks(tx: Db, orgId: string, type: string) {
  return tx
    .select({ id: systemWebhooks.id })
    .from(systemWebhooks)
    .where(
      and(
        eq(systemWebhooks.orgId, orgId),
        eq(systemWebhooks.enabled, true),
        arrayContains(systemWebhooks.events, [type]),
      ),
    );
}

/** One pending system-webhook delivery per subscribed hook for an event (the outbox rows). */
export function hookDeliveryRows(hookIds: string[], event: typeof events.$inferSelect) {
  const payload = presentEvent(event);
  return hookIds.map((webhookId) => ({
    id: newId('webhookDelivery'),
    orgId: event.orgId,
    webhookId,
    eventId: event.id,
    eventType: event.type,
    status: 'pending',
    maxAttempts: SYSTEM_WEBHOOK_MAX_ATTEMPTS,
    nextAttemptAt: event.createdAt,
    payload,
    createdAt: event.createdAt,
  }));
}

/**
 * Appends one event to the organization's log and, in the same transaction, plans one
 * system-webhook delivery per enabled subscription to its type (the outbox: nothing is sent here).
 * Returns how many system-webhook deliveries were planned, so the caller knows to wake the worker.
 */
export async function appendEvent(tx: Db, input: EventInput): Promise<{ id: string; dispatched: number }> {
  const [event] = await tx.insert(events).values(eventRow(input)).returning();
  if (input.fanOut === false) return { id: event.id, dispatched: 0 };
  const hooks = await subscribedHooks(tx, input.orgId, input.type);
  if (hooks.length) {
    await tx.insert(systemWebhookDeliveries).values(
      hookDeliveryRows(
        hooks.map((h) => h.id),
        event,
      ),
    );
  }
  return { id: event.id, dispatched: hooks.length };
}
