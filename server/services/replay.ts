import { and, asc, eq, gt, gte, inArray, lt, type SQL } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { ReplayFilter, ReplayWindow } from '../../shared/contracts/deliveries.js';
import { ops } from '../../shared/contracts/index.js';
import { deliveries, destinations, forms, routes, systemWebhookDeliveries } from '../db/schema.js';
import { appendEvent } from '../events.js';
import type { Actor, Deps } from '../http/context.js';
import { ApiError, notFound } from '../http/errors.js';
import { dueNowUnlessDisabled } from '../worker/disable.js';
import { routeOf } from './next-steps.js';
import { getWebhookRow } from './webhooks.js';

type Filter = z.output<typeof ReplayFilter>;
type Window = z.output<typeof ReplayWindow>;

/**
 * Rows per batch: each batch is one short transaction (select the next ids, update them), so a
 * replay of 100,000 rows never holds many row locks or one long transaction, and intake and the
 * worker keep going between batches.
 */
export const REPLAY_BATCH = 1000;

/** The time and status conditions shared by both outboxes. */
function windowConds(w: Window, table: typeof deliveries | typeof systemWebhookDeliveries): SQL[] {
  const conds = [inArray(table.status, w.status ?? ['dead'])];
  if (w.since) conds.push(gte(table.createdAt, new Date(w.since)));
  if (w.until) conds.push(lt(table.createdAt, new Date(w.until)));
  return conds;
}

/**
 * Walks the matching rows by id in batches; `queue` re-checks each batch's status under the
 * update (a row that changed meanwhile is matched but not queued).
 */
async function inBatches(
  deps: Deps,
  select: (after: string) => Promise<string[]>,
  queue: (ids: string[]) => Promise<number>,
): Promise<{ matched: number; queued: number }> {
  let matched = 0;
  let queued = 0;
  let after = '';
  for (;;) {
    const ids = await select(after);
    if (!ids.length) break;
    matched += ids.length;
    queued += await queue(ids);
    after = ids[ids.length - 1];
    deps.wake(); // the first batches are sent while the next are queued
    if (ids.length < REPLAY_BATCH) break;
  }
  return { matched, queued };
}

/** 404 unless each id the filter names is the caller's (another organization's id is not visible). */
async function checkOwned(deps: Deps, orgId: string, f: Filter) {
  const db = deps.database.db;
  const owned = async (table: typeof destinations | typeof routes | typeof forms, id: string) =>
    (
      await db
        .select({ id: table.id })
        .from(table)
        .where(and(eq(table.id, id), eq(table.orgId, orgId)))
        .limit(1)
    ).length > 0;
  if (f.destination_id && !(await owned(destinations, f.destination_id))) {
    throw notFound('destination', f.destination_id);
  }
  if (f.route_id && !(await owned(routes, f.route_id))) throw notFound('route', f.route_id);
  if (f.form_id && !(await owned(forms, f.form_id))) throw notFound('form', f.form_id);
}

/** The filter as the event records it: what was asked, with the default status filled in. */
const recorded = (f: Filter | Window) => ({ ...f, status: f.status ?? ['dead'] });

/**
 * Bulk replay: every delivery of the organization matching the filter becomes pending and due now
 * with a fresh attempt budget, as retryDelivery does one (a disabled destination's wait until it is
 * enabled). At least one of destination_id, route_id, form_id or since is required, so a bare call
 * cannot replay the whole history by accident. Appends one `deliveries.replayed` event.
 */
export async function retryDeliveries(deps: Deps, actor: Actor, f: Filter) {
  if (!f.destination_id && !f.route_id && !f.form_id && !f.since) {
    throw new ApiError('validation_failed', 'A bulk retry needs a filter narrower than a status.', {
      hint: `Give at least one of destination_id, route_id, form_id or since, e.g. {"destination_id":"ds_…"}; one delivery is retried with ${routeOf(ops.deliveries.retry)}.`,
      details: { issues: [{ path: 'destination_id', message: 'one of destination_id, route_id, form_id, since' }] },
    });
  }
  await checkOwned(deps, actor.orgId, f);
  const db = deps.database.db;
  const conds = [eq(deliveries.orgId, actor.orgId), ...windowConds(f, deliveries)];
  if (f.destination_id) conds.push(eq(deliveries.destinationId, f.destination_id));
  if (f.route_id) conds.push(eq(deliveries.routeId, f.route_id));
  if (f.form_id) conds.push(eq(deliveries.formId, f.form_id));
  const result = await inBatches(
    deps,
    async (after) =>
      (
        await db
          .select({ id: deliveries.id })
          .from(deliveries)
          .where(and(...conds, gt(deliveries.id, after)))
          .orderBy(asc(deliveries.id))
          .limit(REPLAY_BATCH)
      ).map((r) => r.id),
    async (ids) =>
      (
        await db
          .update(deliveries)
          .set({ status: 'pending', attempts: 0, nextAttemptAt: dueNowUnlessDisabled(deps.now()), leaseUntil: null })
          .where(and(inArray(deliveries.id, ids), ...windowConds(f, deliveries)))
          .returning({ id: deliveries.id })
      ).length,
  );
  const ev = await db.transaction((tx) =>
    appendEvent(tx, {
      orgId: actor.orgId,
      type: 'deliveries.replayed',
      subject: {
        destination_id: f.destination_id ?? null,
        route_id: f.route_id ?? null,
        form_id: f.form_id ?? null,
      },
      data: { filter: recorded(f), ...result },
      now: deps.now(),
    }),
  );
  if (ev.dispatched) deps.wake();
  return result;
}

/** The same for one system webhook's deliveries (POST /v1/webhooks/{id}/deliveries/retry). */
export async function retryWebhookDeliveries(deps: Deps, actor: Actor, webhookId: string, w: Window) {
  const db = deps.database.db;
  const hook = await getWebhookRow(db, actor.orgId, webhookId);
  const t = systemWebhookDeliveries;
  const conds = [eq(t.orgId, actor.orgId), eq(t.webhookId, webhookId), ...windowConds(w, t)];
  const now = deps.now();
  const result = await inBatches(
    deps,
    async (after) =>
      (
        await db
          .select({ id: t.id })
          .from(t)
          .where(and(...conds, gt(t.id, after)))
          .orderBy(asc(t.id))
          .limit(REPLAY_BATCH)
      ).map((r) => r.id),
    async (ids) =>
      (
        await db
          .update(t)
          .set({ status: 'pending', attempts: 0, nextAttemptAt: hook.enabled ? now : null, leaseUntil: null })
          .where(and(inArray(t.id, ids), ...windowConds(w, t)))
          .returning({ id: t.id })
      ).length,
  );
  const ev = await db.transaction((tx) =>
    appendEvent(tx, {
      orgId: actor.orgId,
      type: 'deliveries.replayed',
      subject: { webhook_id: webhookId },
      data: { filter: recorded(w), ...result },
      now,
    }),
  );
  if (ev.dispatched) deps.wake();
  return result;
}
