import { and, asc, eq, gt, gte, inArray, lt, type SQL } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { ReplayFilter, ReplayWindow } from '../../shared/contracts/deliveries.js';
import { ops } from '../../shared/contracts/index.js';
import { DELIVERY_KINDS } from '../../shared/contracts/submitter.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { deliveries, destinations, forms, routes } from '../db/schema.js';
import { appendEvent } from '../events.js';
import { trimAttempts } from '../worker/attempts.js';
import { dueNowUnlessDisabled } from '../worker/disable.js';
import { OUTBOX, type Outbox, type OutboxKind } from '../worker/outbox.js';
import { SUBMITTER_TARGET } from '../worker/submitter-target.js';
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
function windowConds(w: Window, table: Outbox['rows']): SQL[] {
  const conds = [inArray(table.status, w.status ?? ['dead'])];
  if (w.since) conds.push(gte(table.createdAt, new Date(w.since)));
  if (w.until) conds.push(lt(table.createdAt, new Date(w.until)));
  return conds;
}

/**
 * Replays the rows of one outbox that match `conds` and the window: each becomes pending and due
 * now with a fresh attempt budget (a disabled target's wait, not due, until it is enabled), walked
 * by id in batches. Each batch's update re-checks the window (a row that changed meanwhile is
 * matched but not queued), and the worker is woken after each, so the first batches are sent
 * while the next are queued. Appends one `deliveries.replayed` event with `subject`.
 */
async function replay(
  deps: Deps,
  kind: OutboxKind,
  orgId: string,
  conds: SQL[],
  w: Window,
  subject: Record<string, string | null>,
): Promise<{ matched: number; queued: number }> {
  const db = deps.database.db;
  const { rows } = OUTBOX[kind];
  const result = { matched: 0, queued: 0 };
  let after = '';
  for (;;) {
    const ids = (
      await db
        .select({ id: rows.id })
        .from(rows)
        .where(and(eq(rows.orgId, orgId), ...windowConds(w, rows), ...conds, gt(rows.id, after)))
        .orderBy(asc(rows.id))
        .limit(REPLAY_BATCH)
    ).map((r) => r.id);
    if (!ids.length) break;
    result.matched += ids.length;
    const nextAttemptAt = dueNowUnlessDisabled(deps.now(), kind);
    if (kind === 'delivery') await trimAttempts(db, ids);
    result.queued += (
      await db
        .update(rows)
        .set({ status: 'pending', attempts: 0, nextAttemptAt, leaseUntil: null })
        .where(and(inArray(rows.id, ids), ...windowConds(w, rows)))
        .returning({ id: rows.id })
    ).length;
    after = ids[ids.length - 1];
    deps.wake();
    if (ids.length < REPLAY_BATCH) break;
  }
  const ev = await db.transaction((tx) =>
    appendEvent(tx, {
      orgId,
      type: 'deliveries.replayed',
      subject,
      data: { filter: recorded(w), ...result },
      now: deps.now(),
    }),
  );
  if (ev.dispatched) deps.wake();
  return result;
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
  // Mail to submitters has a built-in target and kinds for route ids, no rows: every organization has them.
  if (f.destination_id && f.destination_id !== SUBMITTER_TARGET && !(await owned(destinations, f.destination_id))) {
    throw notFound('destination', f.destination_id);
  }
  const kind = (DELIVERY_KINDS as readonly string[]).includes(f.route_id ?? '');
  if (f.route_id && !kind && !(await owned(routes, f.route_id))) throw notFound('route', f.route_id);
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
  const conds: SQL[] = [];
  if (f.destination_id) conds.push(eq(deliveries.destinationId, f.destination_id));
  if (f.route_id) conds.push(eq(deliveries.routeId, f.route_id));
  if (f.form_id) conds.push(eq(deliveries.formId, f.form_id));
  return replay(deps, 'delivery', actor.orgId, conds, f, {
    destination_id: f.destination_id ?? null,
    route_id: f.route_id ?? null,
    form_id: f.form_id ?? null,
  });
}

/** The same for one system webhook's deliveries (POST /v1/webhooks/{id}/deliveries/retry). */
export async function retryWebhookDeliveries(deps: Deps, actor: Actor, webhookId: string, w: Window) {
  await getWebhookRow(deps.database.db, actor.orgId, webhookId);
  const conds = [eq(OUTBOX.hook.rowTarget, webhookId)];
  return replay(deps, 'hook', actor.orgId, conds, w, { webhook_id: webhookId });
}
