import { and, desc, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { EventType } from '../../shared/contracts/events.js';
import type {
  CreateSystemWebhookBody,
  SystemWebhookDeliveryListQuery,
  SystemWebhookUpdated,
  UpdateSystemWebhookBody,
} from '../../shared/contracts/webhooks.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { SystemWebhookRow } from '../db/rows.js';
import { systemWebhookDeliveries, systemWebhooks } from '../db/schema.js';
import { presentWebhook, presentWebhookDelivery, type SystemWebhookOut } from '../present/webhooks.js';
import { setHookEnabled } from '../worker/disable.js';
import { refuseKeyHook } from './destination-approval.js';
import { forgetOnMove, privateHostKind } from './destinations.js';

export type { SystemWebhookDeliveryRow, SystemWebhookRow } from '../db/rows.js';

/** SSRF guard at write time, the same rule as webhook destinations (the worker's outbound guard still applies). */
function checkUrl(deps: Deps, url: string): void {
  if (!deps.config.production || deps.config.outboundAllowPrivate) return;
  const kind = privateHostKind(new URL(url).hostname);
  if (!kind) return;
  throw new ApiError('validation_failed', `The webhook URL points at a non-public address (${kind}).`, {
    hint: 'Use a public URL; this server refuses private addresses (the operator can set OUTBOUND_ALLOW_PRIVATE=true).',
    details: { issues: [{ path: 'url', message: `a ${kind} address is not reachable from this server` }] },
  });
}

const unique = (types: EventType[]) => [...new Set(types)];

/** Subscribes a URL to event types; events appended after the commit are fanned out to it. */
export async function createWebhook(
  deps: Deps,
  actor: Actor,
  body: z.output<typeof CreateSystemWebhookBody>,
): Promise<SystemWebhookOut> {
  checkUrl(deps, body.url);
  await refuseKeyHook(deps, actor);
  const [row] = await deps.database.db
    .insert(systemWebhooks)
    .values({
      id: newId('webhook'),
      orgId: actor.orgId,
      url: body.url,
      events: unique(body.events),
      secret: body.secret ?? null,
      enabled: body.enabled ?? true,
      createdAt: deps.now(),
    })
    .returning();
  return presentWebhook(row);
}

export async function listWebhooks(deps: Deps, actor: Actor, page: Page) {
  const rows = await deps.database.db
    .select()
    .from(systemWebhooks)
    .where(and(eq(systemWebhooks.orgId, actor.orgId), page.after(systemWebhooks.id)))
    .orderBy(desc(systemWebhooks.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentWebhook);
}

export async function getWebhookRow(db: Db, orgId: string, id: string): Promise<SystemWebhookRow> {
  const [row] = await db
    .select()
    .from(systemWebhooks)
    .where(and(eq(systemWebhooks.id, id), eq(systemWebhooks.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('webhook', id);
  return row;
}

/**
 * PATCH: a given url, events list or secret replaces the stored one (secret null removes it).
 * A new url, or turning a disabled webhook back on, resets health so old failures do not count; a url
 * on another origin drops the stored secret unless the same request gives one (said in `warnings`).
 */
export async function updateWebhook(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateSystemWebhookBody>,
): Promise<z.output<typeof SystemWebhookUpdated>> {
  const db = deps.database.db;
  let current = await getWebhookRow(db, actor.orgId, id);
  if (body.url !== undefined) checkUrl(deps, body.url);
  if (body.url !== undefined && body.url !== current.url) await refuseKeyHook(deps, actor);
  if (body.enabled !== undefined && body.enabled !== current.enabled) {
    // Off: its queued deliveries wait; on: the failure run is forgotten and they are due now.
    const switched = await db.transaction((tx) =>
      setHookEnabled(tx, actor.orgId, id, body.enabled as boolean, deps.now()),
    );
    if (!switched) throw notFound('webhook', id);
    if (switched.enabled) deps.wake();
    current = switched;
  }
  const changes: Partial<SystemWebhookRow> = {};
  if (body.url !== undefined) changes.url = body.url;
  if (body.events !== undefined) changes.events = unique(body.events);
  if (body.secret !== undefined) changes.secret = body.secret;
  // The stored secret never follows the URL to another origin unless given again (forgetOnMove).
  const moved = forgetOnMove(
    { url: current.url, secret: current.secret ?? undefined },
    body.secret !== undefined ? { secret: body.secret } : {},
    { url: body.url ?? current.url, secret: body.secret ?? current.secret ?? undefined },
  );
  if (moved.warnings.length) changes.secret = null;
  const warned = moved.warnings.length ? { warnings: moved.warnings } : {};
  const fresh = body.url !== undefined && body.url !== current.url;
  if (fresh) Object.assign(changes, { health: 'unknown', consecutiveFailures: 0 });
  if (!Object.keys(changes).length) return presentWebhook(current);
  const [row] = await db
    .update(systemWebhooks)
    .set(changes)
    .where(and(eq(systemWebhooks.id, id), eq(systemWebhooks.orgId, actor.orgId)))
    .returning();
  if (!row) throw notFound('webhook', id);
  return { ...presentWebhook(row), ...warned };
}

/**
 * Deletes the webhook and all its delivery rows in one transaction: queued ones are never sent, and
 * the history goes with the webhook (its deliveries are only reachable through it).
 */
export async function deleteWebhook(deps: Deps, actor: Actor, id: string) {
  await deps.database.db.transaction(async (tx) => {
    const [row] = await tx
      .delete(systemWebhooks)
      .where(and(eq(systemWebhooks.id, id), eq(systemWebhooks.orgId, actor.orgId)))
      .returning({ id: systemWebhooks.id });
    if (!row) throw notFound('webhook', id);
    await tx
      .delete(systemWebhookDeliveries)
      .where(and(eq(systemWebhookDeliveries.webhookId, id), eq(systemWebhookDeliveries.orgId, actor.orgId)));
  });
}

/** One webhook's deliveries, newest first; 404 when the webhook is not the caller's. */
export async function listWebhookDeliveries(
  deps: Deps,
  actor: Actor,
  id: string,
  page: Page,
  filter: Pick<z.output<typeof SystemWebhookDeliveryListQuery>, 'status'>,
) {
  const db = deps.database.db;
  await getWebhookRow(db, actor.orgId, id);
  const conds = [
    eq(systemWebhookDeliveries.orgId, actor.orgId),
    eq(systemWebhookDeliveries.webhookId, id),
    page.after(systemWebhookDeliveries.id),
  ];
  if (filter.status) conds.push(eq(systemWebhookDeliveries.status, filter.status));
  const rows = await db
    .select()
    .from(systemWebhookDeliveries)
    .where(and(...conds))
    .orderBy(desc(systemWebhookDeliveries.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentWebhookDelivery);
}
