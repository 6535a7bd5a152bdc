import { and, asc, desc, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { DELIVERY_STATUSES, DeliveryListQuery } from '../../shared/contracts/deliveries.js';
import { ops } from '../../shared/contracts/index.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { DeliveryRow } from '../db/rows.js';
import { deliveries } from '../db/schema.js';
import { type DeliveryOut, presentDelivery } from '../present/deliveries.js';
import { trimAttempts } from '../worker/attempts.js';
import { dueNowUnlessDisabled } from '../worker/disable.js';
import { routeOf } from './next-steps.js';

export type { DeliveryRow } from '../db/rows.js';

type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export type DeliveryFilter = Omit<z.output<typeof DeliveryListQuery>, 'cursor' | 'limit'>;

/** Deliveries of the caller's organization, newest first. */
export async function listDeliveries(deps: Deps, actor: Actor, page: Page, filter: DeliveryFilter) {
  const conds = [eq(deliveries.orgId, actor.orgId), page.after(deliveries.id)];
  if (filter.status) conds.push(eq(deliveries.status, filter.status));
  if (filter.form_id) conds.push(eq(deliveries.formId, filter.form_id));
  if (filter.route_id) conds.push(eq(deliveries.routeId, filter.route_id));
  if (filter.destination_id) conds.push(eq(deliveries.destinationId, filter.destination_id));
  if (filter.submission_id) conds.push(eq(deliveries.submissionId, filter.submission_id));
  const rows = await deps.database.db
    .select()
    .from(deliveries)
    .where(and(...conds))
    .orderBy(desc(deliveries.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentDelivery);
}

const deliveryNotFound = (id: string) =>
  new ApiError('not_found', `delivery ${id} was not found in this organization.`, {
    hint: `Check the id; ${routeOf(ops.deliveries.list)} lists them. Ids of other organizations are not visible.`,
  });

export async function getDeliveryRow(db: Db, orgId: string, id: string): Promise<DeliveryRow> {
  const [row] = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.id, id), eq(deliveries.orgId, orgId)))
    .limit(1);
  if (!row) throw deliveryNotFound(id);
  return row;
}

/** The deliveries of one submission, oldest first (SubmissionDetail). */
export async function deliveriesOfSubmission(db: Db, orgId: string, submissionId: string): Promise<DeliveryOut[]> {
  const rows = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.orgId, orgId), eq(deliveries.submissionId, submissionId)))
    .orderBy(asc(deliveries.id));
  return rows.map(presentDelivery);
}

const RETRYABLE: DeliveryStatus[] = ['dead', 'failed', 'sent'];

/**
 * Queues a delivery again: dead, failed or sent ones become pending and due now with a fresh attempt
 * budget (attempts back to 0) and the same payload and id, so receivers can de-duplicate (a disabled
 * destination's delivery waits until it is enabled). The last response and error stay until the
 * next attempt replaces them.
 */
export async function retryDelivery(deps: Deps, actor: Actor, id: string): Promise<DeliveryOut> {
  const row = await deps.database.db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.id, id), eq(deliveries.orgId, actor.orgId)))
      .limit(1)
      .for('update');
    if (!current) throw deliveryNotFound(id);
    if (!RETRYABLE.includes(current.status as DeliveryStatus)) {
      throw new ApiError(
        'conflict',
        `Delivery ${id} is ${current.status}; only dead, failed or sent ones are retried.`,
        {
          hint:
            current.status === 'skipped'
              ? `It was skipped (${current.skipReason}) when planned; change the route's window or quality for new submissions.`
              : current.status === 'held'
                ? `It is held because its submission came in over the monthly quota; it is sent on its own once the plan allows (next month or a larger plan). ${routeOf(ops.me.get)} shows limits and usage.`
                : `It is already queued or being sent; poll ${routeOf(ops.deliveries.get)}.`,
          details: { status: current.status },
        },
      );
    }
    await trimAttempts(tx, [id]);
    const [updated] = await tx
      .update(deliveries)
      .set({ status: 'pending', attempts: 0, nextAttemptAt: dueNowUnlessDisabled(deps.now()), leaseUntil: null })
      .where(eq(deliveries.id, id))
      .returning();
    return updated;
  });
  deps.wake();
  return presentDelivery(row);
}
