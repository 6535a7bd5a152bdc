import { and, arrayContains, eq } from 'drizzle-orm';
import { newId } from '../shared/ids.js';
import type { Db } from './db/client.js';
import { events, systemWebhookDeliveries, systemWebhooks } from './db/schema.js';

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

/** The wire shape of an event: the log's item and the body a system webhook receives. */
export function presentEvent(e: typeof events.$inferSelect) {
  return { id: e.id, type: e.type, subject: e.subject, data: e.data, created_at: e.createdAt.toISOString() };
}

/**
 * Appends one event to the organization's log and, in the same transaction, plans one
 * system-webhook delivery per enabled subscription to its type (the outbox: nothing is sent here).
 * Returns how many system-webhook deliveries were planned, so the caller knows to wake the worker.
 */
export async function appendEvent(tx: Db, input: EventInput): Promise<{ id: string; dispatched: number }> {
  const [event] = await tx
    .insert(events)
    .values({
      id: newId('event'),
      orgId: input.orgId,
      type: input.type,
      subject: input.subject,
      data: input.data,
      createdAt: input.now,
    })
    .returning();
  if (input.fanOut === false) return { id: event.id, dispatched: 0 };
  const hooks = await tx
    .select({ id: systemWebhooks.id })
    .from(systemWebhooks)
    .where(
      and(
        eq(systemWebhooks.orgId, input.orgId),
        eq(systemWebhooks.enabled, true),
        arrayContains(systemWebhooks.events, [input.type]),
      ),
    );
  if (hooks.length) {
    const payload = presentEvent(event);
    await tx.insert(systemWebhookDeliveries).values(
      hooks.map((h) => ({
        id: newId('webhookDelivery'),
        orgId: input.orgId,
        webhookId: h.id,
        eventId: event.id,
        eventType: input.type,
        status: 'pending',
        maxAttempts: SYSTEM_WEBHOOK_MAX_ATTEMPTS,
        nextAttemptAt: input.now,
        payload,
        createdAt: input.now,
      })),
    );
  }
  return { id: event.id, dispatched: hooks.length };
}
