import { and, eq, inArray, isNotNull, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import { destinations, routes, streamSources, streams } from '../db/schema.js';
import { applyMapping, type Mapping, pickSource, selectorsOf } from '../streams/mapping.js';
import { policyOf } from '../worker/policy.js';
import { failsMatch } from './route-match.js';

export interface PlanInput {
  orgId: string;
  form: { id: string; slug: string; tags: string[]; projectId: string };
  submission: {
    id: string;
    status: string;
    /** `over_quota` plans `held` deliveries (released when the plan allows) instead of quality skips. */
    quarantineReason?: string | null;
    test: boolean;
    data: Record<string, unknown>;
    meta: Record<string, unknown>;
    receivedAt: Date;
  };
  now: Date;
}

type Route = typeof routes.$inferSelect;

/**
 * Why a route skips this submission, or null when it is due. `quality: false` judges by the window
 * only (an over-quota submission: its status says nothing about the visitor).
 */
export function skipReason(route: Route, status: string, now: Date, quality = true): 'window' | 'quality' | null {
  const { from, until } = route.window;
  if ((from && now < new Date(from)) || (until && now > new Date(until))) return 'window';
  if (!quality) return null;
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

/** What a stream route delivers: the mapped data, the stream, and the version the mapping was validated against. */
interface StreamView {
  stream: { id: string; slug: string };
  version: number;
  data: Record<string, unknown>;
  extras: Record<string, unknown>;
}

/** The payload of a stream route's delivery: the instant payload with the stream's view of the data. */
export function streamPayload(deliveryId: string, input: PlanInput, view: StreamView) {
  return {
    ...instantPayload(deliveryId, input),
    schema_version: view.version,
    stream: view.stream,
    data: view.data,
    extras: view.extras,
  };
}

/**
 * Whether a destination may be sent to now: enabled, and not waiting for a person's approval
 * (settings.approve_destinations); otherwise its deliveries are planned waiting (pending, not due).
 */
const sendable = sql<boolean>`(${destinations.enabled} and ${destinations.approval} is null)`;

/**
 * The enabled routes of every stream the form feeds, as candidate rows (one per matching source).
 * One statement reads the sources (explicit form_id or a matching tag:/project: selector), their
 * mappings and validated versions, the streams and their routes: a stream publish commits its
 * version and re-validated sources together, so this never sees half of one.
 */
async function streamCandidates(tx: Db, orgId: string, form: PlanInput['form']) {
  return tx
    .select({
      route: routes,
      type: destinations.type,
      enabled: sendable,
      slug: streams.slug,
      source: {
        id: streamSources.id,
        formId: streamSources.formId,
        selector: streamSources.selector,
        mapping: streamSources.mapping,
        version: streamSources.streamSchemaVersion,
      },
    })
    .from(streamSources)
    .innerJoin(streams, eq(streams.id, streamSources.streamId))
    .innerJoin(routes, and(eq(routes.streamId, streamSources.streamId), eq(routes.enabled, true)))
    .innerJoin(destinations, eq(destinations.id, routes.destinationId))
    .where(
      and(
        eq(streamSources.orgId, orgId),
        or(
          eq(streamSources.formId, form.id),
          and(isNotNull(streamSources.selector), inArray(streamSources.selector, selectorsOf(form))),
        ),
      ),
    );
}

/** Every enabled route a submission of the form is planned against: the form's own and its streams'. */
export interface FormRoutes {
  direct: { route: Route; type: string; enabled: boolean }[];
  viaStreams: Awaited<ReturnType<typeof streamCandidates>>;
}

/** Reads the form's routes (two statements); intake's cache keeps the result. */
export async function readFormRoutes(tx: Db, orgId: string, form: PlanInput['form']): Promise<FormRoutes> {
  const direct = await tx
    .select({ route: routes, type: destinations.type, enabled: sendable })
    .from(routes)
    .innerJoin(destinations, eq(destinations.id, routes.destinationId))
    .where(and(eq(routes.orgId, orgId), eq(routes.formId, form.id), eq(routes.enabled, true)));
  return { direct, viaStreams: await streamCandidates(tx, orgId, form) };
}

/** Each stream route once, with the view of the data of the source that wins for this form. */
function streamViews(candidatesOf: FormRoutes['viaStreams'], input: PlanInput) {
  const byRoute = new Map<string, FormRoutes['viaStreams']>();
  for (const row of candidatesOf) byRoute.set(row.route.id, [...(byRoute.get(row.route.id) ?? []), row]);
  const views = [];
  for (const candidates of byRoute.values()) {
    const { route, type, enabled, slug } = candidates[0];
    // Every candidate matched the form by id or selector, so one wins, and a stream route has a stream.
    const source = pickSource(
      candidates.map((c) => c.source),
      input.form,
    );
    if (!source || route.streamId === null) continue;
    const mapped = applyMapping(source.mapping as Mapping, input.submission.data);
    const view: StreamView = { stream: { id: route.streamId, slug }, version: source.version, ...mapped };
    views.push({ route, type, enabled, view });
  }
  return views;
}

/** `match` when the route's condition (extension) rejects the submission: over the mapped data on a stream route. */
function matchSkip(route: Route, input: PlanInput, view: StreamView | undefined): 'match' | null {
  if (route.match === null) return null;
  const { submission: s } = input;
  const ctx = () => ({ data: view?.data ?? s.data, meta: s.meta, submission: { test: s.test, status: s.status } });
  return failsMatch(route, ctx) ? 'match' : null;
}

/**
 * The delivery rows of one submission, one per applicable route of the form and of every stream it
 * feeds: disabled routes plan nothing, digest routes are collected per period later, window and
 * quality rules and a route's `match` that rejects it plan a `skipped` row, everything else is `pending` and due now. An over-quota
 * submission is not the visitor's fault, so only the window rule applies to it and its due routes
 * are planned `held` (never claimed; the release job makes them pending when the plan allows). A
 * stream delivery's payload is mapped now and kept: a later publish or mapping change never
 * rewrites it.
 */
export function planFromRoutes(formRoutes: FormRoutes, input: PlanInput) {
  const rows: { route: Route; type: string; enabled: boolean; view?: StreamView }[] = [
    ...formRoutes.direct,
    ...streamViews(formRoutes.viaStreams, input),
  ];
  // Over quota, or waiting for the submitter's confirmation (double opt-in): sent once released.
  const held =
    input.submission.status === 'quarantined' &&
    (input.submission.quarantineReason === 'over_quota' ||
      input.submission.quarantineReason === 'pending_confirmation');
  return rows
    .filter(({ route }) => route.mode.type !== 'digest')
    .map(({ route, type, enabled, view }) => {
      const id = newId('delivery');
      const skip = skipReason(route, input.submission.status, input.now, !held) ?? matchSkip(route, input, view);
      const status = skip ? 'skipped' : held ? 'held' : 'pending';
      return {
        id,
        orgId: input.orgId,
        submissionId: input.submission.id,
        routeId: route.id,
        destinationId: route.destinationId,
        /** Not a column: the type travels with a row handed to the worker unclaimed (its delivery policy). */
        destinationType: type,
        formId: input.form.id,
        status,
        skipReason: skip,
        maxAttempts: policyOf(type).maxAttempts,
        // A disabled destination's delivery waits (pending, not due) until it is enabled again.
        nextAttemptAt: status === 'pending' && enabled ? input.now : null,
        schemaVersion: view?.version ?? null,
        payload: view ? streamPayload(id, input, view) : instantPayload(id, input),
        createdAt: input.now,
      };
    });
}
