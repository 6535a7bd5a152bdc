import { and, count, desc, eq, inArray, max, sql } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { CreateStreamBody, PublishStreamSchemaBody, UpdateStreamBody } from '../../shared/contracts/streams.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { StreamRow } from '../db/rows.js';
import { deliveries, forms, routes, streamSchemas, streamSources, streams, submissions } from '../db/schema.js';
import { slugify } from '../domain/orgs.js';
import { routeCounts } from '../domain/route-counts.js';
import { appendEvent } from '../events.js';
import { presentRoute } from '../present/routes.js';
import { presentSource, presentStream, presentStreamSchema } from '../present/streams.js';
import { compileOrThrow } from '../schemas/validate.js';
import { type Mapping, mappingStatus, missingFields } from '../streams/mapping.js';
import {
  type Counts,
  getStreamRow,
  invalid,
  type SchemaInput,
  schemaMissing,
  schemaRow,
  sourceMatchesForm,
  sourcesOf,
} from '../streams/rows.js';
import { deleteAttempts } from '../worker/attempts.js';
import { insertSources, lockForms, resolveSources, schemaFromSources } from './stream-sources.js';

export type { StreamRow, StreamSchemaRow, StreamSourceRow } from '../db/rows.js';
export type { FormStream } from '../present/forms.js';
export type { SourceInput } from '../streams/rows.js';
export { getStreamRow, lockStream } from '../streams/rows.js';
export { attachFromTemplate, attachSources, detachSource, listSources } from './stream-sources.js';
export { previewStream, streamsOfForms } from './stream-views.js';

const DAY_MS = 86_400_000;

/** Sources, routes and 30-day non-test submissions of the matched forms, per stream, in three grouped queries. */
async function streamCounts(deps: Deps, orgId: string, ids: string[]): Promise<Map<string, Counts>> {
  const out = new Map<string, Counts>(ids.map((id) => [id, { sources: 0, routes: 0, submissions_30d: 0 }]));
  if (!ids.length) return out;
  const db = deps.database.db;
  const since = new Date(deps.now().getTime() - 30 * DAY_MS);
  const [sourceRows, routeRows, subRows] = await Promise.all([
    db
      .select({ id: streamSources.streamId, n: count() })
      .from(streamSources)
      .where(and(eq(streamSources.orgId, orgId), inArray(streamSources.streamId, ids)))
      .groupBy(streamSources.streamId),
    db
      .select({ id: routes.streamId, n: count() })
      .from(routes)
      .where(and(eq(routes.orgId, orgId), inArray(routes.streamId, ids)))
      .groupBy(routes.streamId),
    db
      .select({ id: streamSources.streamId, n: sql<string | number>`count(distinct ${submissions.id})` })
      .from(streamSources)
      .innerJoin(forms, and(eq(forms.orgId, streamSources.orgId), eq(forms.sandbox, false), sourceMatchesForm))
      .innerJoin(submissions, eq(submissions.formId, forms.id))
      .where(
        and(
          eq(streamSources.orgId, orgId),
          inArray(streamSources.streamId, ids),
          eq(submissions.test, false),
          sql`${submissions.receivedAt} >= ${since.toISOString()}`,
        ),
      )
      .groupBy(streamSources.streamId),
  ]);
  for (const r of sourceRows) if (r.id) (out.get(r.id) as Counts).sources = Number(r.n);
  for (const r of routeRows) if (r.id) (out.get(r.id) as Counts).routes = Number(r.n);
  for (const r of subRows) if (r.id) (out.get(r.id) as Counts).submissions_30d = Number(r.n);
  return out;
}

/** StreamDetail: the stream with counts, current schema, sources, routes and the form template. */
export async function streamDetail(deps: Deps, stream: StreamRow) {
  const db = deps.database.db;
  const [counts, schema, sources, routeRows] = await Promise.all([
    streamCounts(deps, stream.orgId, [stream.id]),
    schemaRow(db, stream),
    sourcesOf(db, stream.orgId, stream.id),
    db
      .select()
      .from(routes)
      .where(and(eq(routes.orgId, stream.orgId), eq(routes.streamId, stream.id)))
      .orderBy(desc(routes.id)),
  ]);
  const rc = await routeCounts(
    db,
    stream.orgId,
    routeRows.map((r) => r.id),
  );
  const version = schema ? presentStreamSchema(schema) : null;
  return {
    ...presentStream(stream, counts.get(stream.id)),
    schema: version,
    sources: sources.map(presentSource),
    routes: routeRows.map((r) => presentRoute(r, rc.get(r.id))),
    // What POST /v1/forms {from_template} publishes as the new form's schema version 1.
    form_template: version
      ? { ...version, version: 1, changelog: `Template of stream ${stream.slug} v${version.version}`, inferred: false }
      : null,
  };
}

export async function getStream(deps: Deps, actor: Actor, id: string) {
  return streamDetail(deps, await getStreamRow(deps.database.db, actor.orgId, id));
}

export async function listStreams(deps: Deps, actor: Actor, page: Page) {
  const rows = await deps.database.db
    .select()
    .from(streams)
    .where(and(eq(streams.orgId, actor.orgId), page.after(streams.id)))
    .orderBy(desc(streams.id))
    .limit(page.limit + 1);
  const counts = await streamCounts(
    deps,
    actor.orgId,
    rows.map((r) => r.id),
  );
  return pageResult(rows, page, (s) => presentStream(s, counts.get(s.id)));
}

/**
 * Creates a stream: schema version 1 (given, or the first source form's current schema; none →
 * 422 stream_schema_missing) and its sources, every mapping complete. Idempotent by slug with
 * if_exists "return".
 */
export async function createStream(deps: Deps, actor: Actor, body: z.output<typeof CreateStreamBody>) {
  const db = deps.database.db;
  const slug = body.slug ?? slugify(body.name);
  if (!slug) {
    throw invalid('The name gives no usable slug.', [{ path: 'slug', message: 'pass a slug of a-z, 0-9 and -' }]);
  }
  const existing = await findStream(db, actor.orgId, slug);
  if (existing) return existingOrConflict(deps, existing, body.if_exists);
  const inputs = body.sources ?? [];
  const schema = body.schema ?? (await schemaFromSources(db, actor.orgId, inputs));
  if (!schema) throw schemaMissing(`"${slug}"`);
  compileOrThrow(schema.json_schema);
  const resolved = await resolveSources(db, actor.orgId, inputs, schema.json_schema);
  const now = deps.now();
  const result = await db.transaction(async (tx) => {
    await lockForms(tx, actor.orgId, resolved);
    const [stream] = await tx
      .insert(streams)
      .values({
        id: newId('stream'),
        orgId: actor.orgId,
        slug,
        name: body.name,
        currentSchemaVersion: 1,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning();
    if (!stream) return null;
    await insertVersion(tx, actor, stream.id, 1, schema, now);
    await insertSources(tx, actor.orgId, stream.id, 1, resolved, now);
    const event = await appendEvent(tx, {
      orgId: actor.orgId,
      type: 'stream.schema.changed',
      subject: { stream_id: stream.id },
      data: { version: 1, changelog: schema.changelog ?? '', created: true },
      now,
    });
    return { stream, dispatched: event.dispatched };
  });
  if (!result) {
    // Another request created the slug between our check and insert.
    return existingOrConflict(deps, (await findStream(db, actor.orgId, slug)) as StreamRow, body.if_exists);
  }
  if (result.dispatched) deps.wake();
  return { created: true, stream: await streamDetail(deps, result.stream) };
}

export async function findStream(db: Db, orgId: string, slug: string) {
  const [row] = await db
    .select()
    .from(streams)
    .where(and(eq(streams.orgId, orgId), eq(streams.slug, slug)))
    .limit(1);
  return row;
}

async function existingOrConflict(deps: Deps, s: StreamRow, ifExists?: string) {
  if (ifExists === 'return') return { created: false, stream: await streamDetail(deps, s) };
  throw new ApiError('conflict', `A stream with slug "${s.slug}" exists already.`, {
    hint: 'Pass if_exists: "return" to get the existing stream, or choose another name or slug.',
    details: { existing_id: s.id },
  });
}

export async function insertVersion(
  tx: Db,
  actor: Actor,
  streamId: string,
  version: number,
  schema: SchemaInput,
  now: Date,
) {
  const [row] = await tx
    .insert(streamSchemas)
    .values({
      id: newId('streamSchema'),
      orgId: actor.orgId,
      streamId,
      version,
      jsonSchema: schema.json_schema,
      ui: schema.ui ?? {},
      changelog: schema.changelog ?? '',
      createdBy: actor.keyId ?? actor.userId ?? 'unknown',
      createdAt: now,
    })
    .returning();
  return row;
}

export async function updateStream(deps: Deps, actor: Actor, id: string, body: z.output<typeof UpdateStreamBody>) {
  const db = deps.database.db;
  const current = await getStreamRow(db, actor.orgId, id);
  if (body.slug !== undefined && body.slug !== current.slug) {
    const taken = await findStream(db, actor.orgId, body.slug);
    if (taken) {
      throw new ApiError('conflict', `A stream with slug "${body.slug}" exists already.`, {
        hint: 'Choose another slug.',
        details: { existing_id: taken.id },
      });
    }
  }
  const [row] = await db
    .update(streams)
    .set({
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.slug !== undefined ? { slug: body.slug } : {}),
      updatedAt: deps.now(),
    })
    .where(and(eq(streams.id, id), eq(streams.orgId, actor.orgId)))
    .returning();
  return streamDetail(deps, row);
}

/** Deletes a stream with its versions, sources, routes and those routes' deliveries. */
export async function deleteStream(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  await getStreamRow(db, actor.orgId, id);
  const org = actor.orgId;
  await db.transaction(async (tx) => {
    // Taken first: a route or source being attached (they lock the stream) finishes before, or finds no stream after.
    await tx
      .select({ id: streams.id })
      .from(streams)
      .where(and(eq(streams.orgId, org), eq(streams.id, id)))
      .for('update');
    const routeIds = (
      await tx
        .select({ id: routes.id })
        .from(routes)
        .where(and(eq(routes.orgId, org), eq(routes.streamId, id)))
    ).map((r) => r.id);
    if (routeIds.length) {
      await deleteAttempts(tx, and(eq(deliveries.orgId, org), inArray(deliveries.routeId, routeIds)));
      await tx.delete(deliveries).where(and(eq(deliveries.orgId, org), inArray(deliveries.routeId, routeIds)));
      await tx.delete(routes).where(and(eq(routes.orgId, org), inArray(routes.id, routeIds)));
    }
    await tx.delete(streamSources).where(and(eq(streamSources.orgId, org), eq(streamSources.streamId, id)));
    await tx.delete(streamSchemas).where(and(eq(streamSchemas.orgId, org), eq(streamSchemas.streamId, id)));
    await tx.delete(streams).where(and(eq(streams.orgId, org), eq(streams.id, id)));
  });
}

export async function getStreamSchema(deps: Deps, actor: Actor, id: string) {
  const stream = await getStreamRow(deps.database.db, actor.orgId, id);
  const row = await schemaRow(deps.database.db, stream);
  if (!row) throw schemaMissing(id);
  return presentStreamSchema(row);
}

/**
 * Publishes stream schema version n+1 (json_schema, or from_form_id's current schema, or with
 * neither the first explicit source form's) and re-validates every source mapping against it, all
 * in one transaction under the stream's row lock: intake reads the version and the mappings in one
 * statement, so it sees either the old version with the old statuses or the new one with the new.
 */
export async function publishStreamSchema(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof PublishStreamSchemaBody>,
) {
  const db = deps.database.db;
  const stream = await getStreamRow(db, actor.orgId, id);
  let schema: SchemaInput | undefined;
  if (body.json_schema !== undefined) {
    schema = { json_schema: body.json_schema, ui: body.ui, changelog: body.changelog };
  } else {
    const from = body.from_form_id
      ? [{ form_id: body.from_form_id }]
      : (await sourcesOf(db, actor.orgId, id)).filter((s) => s.formId).map((s) => ({ form_id: s.formId as string }));
    schema = await schemaFromSources(db, actor.orgId, from);
    if (schema) schema = { ...schema, ui: body.ui ?? schema.ui, changelog: body.changelog ?? schema.changelog };
  }
  if (!schema) throw schemaMissing(stream.id);
  compileOrThrow(schema.json_schema);
  const input = schema;
  const now = deps.now();
  const { row, dispatched } = await db.transaction(async (tx) => {
    const [locked] = await tx
      .select({ id: streams.id })
      .from(streams)
      .where(and(eq(streams.id, id), eq(streams.orgId, actor.orgId)))
      .for('update');
    if (!locked) throw notFound('stream', id);
    const [{ last }] = await tx
      .select({ last: max(streamSchemas.version) })
      .from(streamSchemas)
      .where(eq(streamSchemas.streamId, id));
    const version = (last ?? 0) + 1;
    const inserted = await insertVersion(tx, actor, id, version, input, now);
    await tx
      .update(streams)
      .set({ currentSchemaVersion: version, updatedAt: now })
      .where(and(eq(streams.id, id), eq(streams.orgId, actor.orgId)));
    const statuses = { valid: 0, incomplete: 0 };
    for (const s of await sourcesOf(tx, actor.orgId, id)) {
      const missing = missingFields(s.mapping as Mapping, input.json_schema);
      statuses[mappingStatus(missing)] += 1;
      await tx
        .update(streamSources)
        .set({ mappingStatus: mappingStatus(missing), missing, streamSchemaVersion: version })
        .where(eq(streamSources.id, s.id));
    }
    const event = await appendEvent(tx, {
      orgId: actor.orgId,
      type: 'stream.schema.changed',
      subject: { stream_id: id },
      data: { version, changelog: inserted.changelog, sources: statuses },
      now,
    });
    return { row: inserted, dispatched: event.dispatched };
  });
  if (dispatched) deps.wake();
  return presentStreamSchema(row);
}
