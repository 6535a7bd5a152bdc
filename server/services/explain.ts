import { and, asc, desc, eq, inArray, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { SUBMITTER_TARGET } from '../../shared/contracts/submitter.js';
import type { Actor, Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import {
  deliveries,
  deliveryAttempts,
  destinations,
  events,
  forms,
  routes,
  spamMarks,
  streamSources,
} from '../db/schema.js';
import {
  type CurrentRoute,
  type ExplainDestination,
  type ExplanationOut,
  presentExplanation,
} from '../present/explain.js';
import { selectorsOf } from '../streams/mapping.js';
import { getSubmissionRow } from './submissions.js';

/**
 * GET /v1/submissions/{id}/explain: why a submission ended where it did, read from what is stored
 * (the submission's status, reason, issues and spam verdict; its deliveries and their skip
 * reasons; every recorded attempt; the state of the destinations that keep deliveries waiting).
 * Another organization's id is a 404 (getSubmissionRow).
 */
export async function explainSubmission(deps: Deps, actor: Actor, id: string): Promise<ExplanationOut> {
  const db = deps.database.db;
  const submission = await getSubmissionRow(db, actor.orgId, id);
  const [form] = await db
    .select({ status: forms.status, sandbox: forms.sandbox, tags: forms.tags, projectId: forms.projectId })
    .from(forms)
    .where(and(eq(forms.id, submission.formId), eq(forms.orgId, actor.orgId)))
    .limit(1);
  const rows = await db
    .select()
    .from(deliveries)
    .where(and(eq(deliveries.orgId, actor.orgId), eq(deliveries.submissionId, id)))
    .orderBy(asc(deliveries.createdAt), asc(deliveries.id));
  const ids = rows.map((d) => d.id);
  const [attempts, mark, routeRows] = await Promise.all([
    ids.length
      ? db
          .select()
          .from(deliveryAttempts)
          .where(and(eq(deliveryAttempts.orgId, actor.orgId), inArray(deliveryAttempts.deliveryId, ids)))
          .orderBy(asc(deliveryAttempts.id))
      : [],
    db
      .select({ mark: spamMarks.mark })
      .from(spamMarks)
      .where(and(eq(spamMarks.orgId, actor.orgId), eq(spamMarks.submissionId, id)))
      .limit(1),
    form
      ? routesOf(
          db,
          actor.orgId,
          submission.formId,
          form,
          rows.map((d) => d.routeId),
        )
      : [],
  ]);
  const destIds = [...new Set([...rows.map((d) => d.destinationId), ...routeRows.map((r) => r.destinationId)])].filter(
    (d) => d !== SUBMITTER_TARGET,
  );
  return presentExplanation({
    submission,
    form: { status: form?.status ?? 'active', sandbox: form?.sandbox ?? false },
    mark: mark[0]?.mark ?? null,
    deliveries: rows,
    routes: new Map(routeRows.map((r) => [r.id, r])),
    destinations: await destinationsOf(db, actor.orgId, destIds),
    attempts,
  });
}

/**
 * The routes the deliveries name, and every route (enabled or not) of the form and of the streams
 * it feeds now (an explicit source or a tag:/project: selector), as they are now.
 */
async function routesOf(
  db: Db,
  orgId: string,
  formId: string,
  form: { tags: string[]; projectId: string },
  named: string[],
): Promise<CurrentRoute[]> {
  const streamIds = db
    .select({ id: streamSources.streamId })
    .from(streamSources)
    .where(
      and(
        eq(streamSources.orgId, orgId),
        or(
          eq(streamSources.formId, formId),
          and(isNotNull(streamSources.selector), inArray(streamSources.selector, selectorsOf(form))),
        ),
      ),
    );
  const rows = await db
    .select({
      id: routes.id,
      streamId: routes.streamId,
      destinationId: routes.destinationId,
      enabled: routes.enabled,
      mode: routes.mode,
      createdAt: routes.createdAt,
    })
    .from(routes)
    .where(
      and(
        eq(routes.orgId, orgId),
        or(
          eq(routes.formId, formId),
          inArray(routes.streamId, streamIds),
          named.length ? inArray(routes.id, named) : sql`false`,
        ),
      ),
    )
    .orderBy(asc(routes.createdAt), asc(routes.id));
  return rows.map(({ mode, ...r }) => ({ ...r, digest: mode.type === 'digest' }));
}

/**
 * The destinations by id, as they are now, with when each disabled one was switched off (its
 * latest destination.disabled event) and how many deliveries wait for it unattempted.
 */
async function destinationsOf(db: Db, orgId: string, ids: string[]): Promise<Map<string, ExplainDestination>> {
  const out = new Map<string, ExplainDestination>();
  if (!ids.length) return out;
  const rows = await db
    .select()
    .from(destinations)
    .where(and(eq(destinations.orgId, orgId), inArray(destinations.id, ids)));
  for (const d of rows) {
    let disabledAt: Date | null = null;
    let waiting = 0;
    if (!d.enabled && d.disabledReason !== 'disabled by hand') {
      const [ev] = await db
        .select({ at: events.createdAt })
        .from(events)
        .where(
          and(
            eq(events.orgId, orgId),
            eq(events.type, 'destination.disabled'),
            sql`${events.subject}->>'destination_id' = ${d.id}`,
          ),
        )
        .orderBy(desc(events.createdAt))
        .limit(1);
      disabledAt = ev?.at ?? null;
    }
    if (!d.enabled || d.approval === 'pending') {
      const [n] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(deliveries)
        .where(
          and(eq(deliveries.destinationId, d.id), eq(deliveries.status, 'pending'), isNull(deliveries.nextAttemptAt)),
        );
      waiting = Number(n?.n ?? 0);
    }
    out.set(d.id, {
      id: d.id,
      name: d.name,
      type: d.type,
      enabled: d.enabled,
      disabledReason: d.disabledReason,
      consecutiveFailures: d.consecutiveFailures,
      failingSince: d.failingSince,
      disabledAt,
      waiting,
      approvalPending: d.approval === 'pending',
      approvalAskedBy: d.approvalKeyName,
      approvalRequestedAt: d.approvalRequestedAt,
    });
  }
  return out;
}
