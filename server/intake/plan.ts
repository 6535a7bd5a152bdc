import { and, eq } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import { deliveries, destinations, routes } from '../db/schema.js';

export const MAX_ATTEMPTS: Record<string, number> = { webhook: 10, email: 8, telegram: 8, slack: 8, discord: 8 };

export interface PlanInput {
  orgId: string;
  form: { id: string; slug: string };
  submission: {
    id: string;
    status: string;
    test: boolean;
    data: Record<string, unknown>;
    meta: Record<string, unknown>;
    receivedAt: Date;
  };
  now: Date;
}

type Route = typeof routes.$inferSelect;

/** Why a route skips this submission, or null when it is due. */
export function skipReason(route: Route, status: string, now: Date): 'window' | 'quality' | null {
  const { from, until } = route.window;
  if ((from && now < new Date(from)) || (until && now > new Date(until))) return 'window';
  if (status === 'spam' && route.quality.exclude_spam !== false) return 'quality';
  if (status === 'quarantined' && route.quality.exclude_quarantined !== false) return 'quality';
  return null;
}

/** The webhook payload snapshot of an instant delivery (the spec's shape). */
export function instantPayload(deliveryId: string, input: PlanInput) {
  return {
    id: deliveryId,
    type: 'submission.received',
    schema_version: null,
    stream: null,
    form: { id: input.form.id, slug: input.form.slug },
    submission: {
      id: input.submission.id,
      status: input.submission.status,
      test: input.submission.test,
      received_at: input.submission.receivedAt.toISOString(),
    },
    data: input.submission.data,
    extras: {},
    meta: input.submission.meta,
  };
}

/**
 * Plans one delivery per applicable route of the form, inside the intake transaction:
 * disabled routes plan nothing, digest routes are collected per period later,
 * window and quality rules plan a `skipped` row, everything else is `pending` and due now.
 */
export async function planDeliveries(tx: Db, input: PlanInput) {
  const rows = await tx
    .select({ route: routes, type: destinations.type })
    .from(routes)
    .innerJoin(destinations, eq(destinations.id, routes.destinationId))
    .where(and(eq(routes.orgId, input.orgId), eq(routes.formId, input.form.id), eq(routes.enabled, true)));
  const planned = rows
    .filter(({ route }) => route.mode.type !== 'digest')
    .map(({ route, type }) => {
      const id = newId('delivery');
      const skip = skipReason(route, input.submission.status, input.now);
      return {
        id,
        orgId: input.orgId,
        submissionId: input.submission.id,
        routeId: route.id,
        destinationId: route.destinationId,
        formId: input.form.id,
        status: skip ? 'skipped' : 'pending',
        skipReason: skip,
        maxAttempts: MAX_ATTEMPTS[type] ?? 8,
        nextAttemptAt: skip ? null : input.now,
        payload: instantPayload(id, input),
        createdAt: input.now,
      };
    });
  if (planned.length) await tx.insert(deliveries).values(planned);
  return planned;
}
