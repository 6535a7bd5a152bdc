import { and, desc, eq, inArray } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { DriftListQuery } from '../../shared/contracts/drift.js';
import { ops } from '../../shared/contracts/index.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import { driftEvents } from '../db/schema.js';
import { getFormRow } from '../domain/form-rows.js';
import { presentDrift } from '../present/drift.js';
import { routeOf } from './next-steps.js';

export type { DriftRow } from '../db/rows.js';

/** GET /v1/forms/{id}/drift: open drift by default, newest first. */
export async function listDrift(
  deps: Deps,
  actor: Actor,
  formId: string,
  page: Page,
  query: Pick<z.output<typeof DriftListQuery>, 'status'>,
) {
  const db = deps.database.db;
  await getFormRow(db, actor.orgId, formId);
  const status = query.status ?? 'open';
  const rows = await db
    .select()
    .from(driftEvents)
    .where(
      and(
        eq(driftEvents.orgId, actor.orgId),
        eq(driftEvents.formId, formId),
        status === 'all' ? undefined : eq(driftEvents.status, status),
        page.after(driftEvents.id),
      ),
    )
    .orderBy(desc(driftEvents.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentDrift);
}

/**
 * POST /v1/forms/{id}/drift/{driftId}/dismiss: an open event becomes dismissed. Later submissions with
 * the same (field, kind) under the same schema version count into it silently (see recordDrift).
 */
export async function dismissDrift(deps: Deps, actor: Actor, formId: string, driftId: string) {
  const now = deps.now();
  return deps.database.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(driftEvents)
      .where(and(eq(driftEvents.id, driftId), eq(driftEvents.orgId, actor.orgId), eq(driftEvents.formId, formId)))
      .for('update');
    if (!row) throw notFound('drift event', driftId);
    if (row.status !== 'open') {
      throw new ApiError('conflict', `Drift event ${driftId} is ${row.status}, not open.`, {
        hint:
          row.status === 'dismissed'
            ? 'It is dismissed already; nothing to do.'
            : `A newer schema version closed it; ${routeOf(ops.drift.list)} lists the open ones.`,
      });
    }
    const [updated] = await tx
      .update(driftEvents)
      .set({
        status: 'dismissed',
        closedAt: now,
        closedReason: `dismissed by ${actor.keyId ?? actor.userId ?? 'unknown'}`,
      })
      .where(eq(driftEvents.id, driftId))
      .returning();
    return presentDrift(updated);
  });
}

/** The drift rows a submission raised or counted into, for SubmissionDetail. */
export async function driftOfSubmission(db: Db, orgId: string, refs: { drift_id: string }[] | null) {
  if (!refs?.length) return [];
  const rows = await db
    .select()
    .from(driftEvents)
    .where(
      and(
        eq(driftEvents.orgId, orgId),
        inArray(
          driftEvents.id,
          refs.map((r) => r.drift_id),
        ),
      ),
    );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return refs.flatMap((r) => {
    const row = byId.get(r.drift_id);
    return row ? [presentDrift(row)] : [];
  });
}
