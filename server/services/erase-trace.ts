import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { events, systemWebhookDeliveries } from '../db/schema.js';

/** What an erased address reads as wherever it was written into text the service keeps. */
export const ERASED_ADDRESS = '[erased]';

/**
 * The address as a whole word of text, any case: not a part of a longer address
 * (`other.ada@example.com`, `ada@example.com.evil`), so a bystander's address stays.
 */
function addressPattern(address: string): RegExp {
  const quoted = address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w.!#$%&'*+/=?^\`{|}~-])${quoted}(?![\\w-]|\\.[\\w-])`, 'gi');
}

/** A JSON value with the address replaced in every string and key, at any depth. */
function scrub(value: unknown, re: RegExp): unknown {
  if (typeof value === 'string') return value.replace(re, ERASED_ADDRESS);
  if (Array.isArray(value)) return value.map((v) => scrub(v, re));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(re, ERASED_ADDRESS), scrub(v, re)]));
  }
  return value;
}

/** The text of a jsonb or text column holds the address (any case): a cheap filter before the exact scrub. */
const holds = (column: unknown, address: string) => sql`strpos(lower(${column}::text), ${address}) > 0`;

/**
 * Erase reaches past the submissions: the address may have been copied into the event log (a
 * receiver's error that echoed it: `delivery.dead` data.error, `destination.failing`
 * data.last_error) and into system-webhook deliveries (their payload is an event; their last
 * response and error are a receiver's words). Each such text keeps its row with the address
 * replaced by ERASED_ADDRESS. Runs in the caller's transaction; answers how many rows changed.
 */
export async function eraseAddressTraces(tx: Db, orgId: string, address: string): Promise<number> {
  const re = addressPattern(address);
  let changed = 0;
  const logged = await tx
    .select({ id: events.id, subject: events.subject, data: events.data })
    .from(events)
    .where(and(eq(events.orgId, orgId), sql`(${holds(events.data, address)} or ${holds(events.subject, address)})`));
  for (const e of logged) {
    const data = scrub(e.data, re) as Record<string, unknown>;
    const subject = scrub(e.subject, re) as Record<string, unknown>;
    if (JSON.stringify(data) === JSON.stringify(e.data) && JSON.stringify(subject) === JSON.stringify(e.subject)) {
      continue;
    }
    await tx
      .update(events)
      .set({ data, subject })
      .where(and(eq(events.orgId, orgId), eq(events.id, e.id)));
    changed += 1;
  }
  const hooks = await tx
    .select({
      id: systemWebhookDeliveries.id,
      payload: systemWebhookDeliveries.payload,
      lastResponse: systemWebhookDeliveries.lastResponse,
      lastError: systemWebhookDeliveries.lastError,
    })
    .from(systemWebhookDeliveries)
    .where(
      and(
        eq(systemWebhookDeliveries.orgId, orgId),
        sql`(${holds(systemWebhookDeliveries.payload, address)} or ${holds(systemWebhookDeliveries.lastResponse, address)}
          or ${holds(systemWebhookDeliveries.lastError, address)})`,
      ),
    );
  for (const h of hooks) {
    const next = {
      payload: scrub(h.payload, re) as Record<string, unknown>,
      lastResponse: scrub(h.lastResponse, re) as Record<string, unknown> | null,
      lastError: h.lastError === null ? null : h.lastError.replace(re, ERASED_ADDRESS),
    };
    if (
      JSON.stringify(next) ===
      JSON.stringify({ payload: h.payload, lastResponse: h.lastResponse, lastError: h.lastError })
    ) {
      continue;
    }
    await tx
      .update(systemWebhookDeliveries)
      .set(next)
      .where(and(eq(systemWebhookDeliveries.orgId, orgId), eq(systemWebhookDeliveries.id, h.id)));
    changed += 1;
  }
  return changed;
}
