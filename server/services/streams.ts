import { and, count, desc, eq, inArray, isNotNull, max, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import {
  deliveries,
  formSchemas,
  forms,
  projects,
  routes,
  streamSchemas,
  streamSources,
  streams,
  submissions,
} from '../db/schema.js';
import { appendEvent } from '../events.js';
import type { Actor, Deps } from '../http/context.js';
import { ApiError, notFound } from '../http/errors.js';
import { type Page, pageResult } from '../http/pagination.js';
import { compileOrThrow } from '../schemas/validate.js';
import {
  applyMapping,
  checkMapping,
  declaredFields,
  identityMapping,
  type Mapping,
  mappingStatus,
  missingFields,
  parseSelector,
  pickSource,
  selectorsOf,
} from '../streams/mapping.js';
import { slugify } from './orgs.js';
import { presentRoute, routeCounts } from './routes.js';
import { presentSchemaVersion } from './schemas.js';

export type StreamRow = typeof streams.$inferSelect;
export type StreamSchemaRow = typeof streamSchemas.$inferSelect;
export type StreamSourceRow = typeof streamSources.$inferSelect;
type FormRow = typeof forms.$inferSelect;
type Ui = Record<string, Record<string, unknown>>;
type Counts = { sources: number; routes: number; submissions_30d: number };
type SchemaInput = { json_schema: Record<string, unknown>; ui?: Ui; changelog?: string };
export type SourceInput = { form_id?: string; selector?: string; mapping?: Mapping };

const DAY_MS = 86_400_000;

export const presentStreamSchema = (s: StreamSchemaRow) => presentSchemaVersion(s);

export function presentSource(s: StreamSourceRow) {
  return {
    id: s.id,
    form_id: s.formId,
    selector: s.selector,
    mapping: s.mapping as Record<string, Record<string, unknown>>,
    mapping_status: s.mappingStatus as 'valid' | 'incomplete',
    missing: s.missing,
    stream_schema_version: s.streamSchemaVersion,
    created_at: s.createdAt.toISOString(),
  };
}

export function presentStream(s: StreamRow, counts: Counts = { sources: 0, routes: 0, submissions_30d: 0 }) {
  return {
    id: s.id,
    slug: s.slug,
    name: s.name,
    current_schema_version: s.currentSchemaVersion,
    counts,
    created_at: s.createdAt.toISOString(),
  };
}

/** SQL: does form `f` match source `ss` (its form id, one of its tags, or its project)? */
const sourceMatchesForm = sql`(
  ${streamSources.formId} = ${forms.id}
  or (${streamSources.selector} like 'tag:%' and ${forms.tags} @> array[substr(${streamSources.selector}, 5)]::text[])
  or ${streamSources.selector} = 'project:' || ${forms.projectId}
)`;

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

export async function getStreamRow(db: Db, orgId: string, id: string): Promise<StreamRow> {
  const [row] = await db
    .select()
    .from(streams)
    .where(and(eq(streams.id, id), eq(streams.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('stream', id);
  return row;
}

async function schemaRow(db: Db, stream: StreamRow) {
  if (stream.currentSchemaVersion === null) return undefined;
  const [row] = await db
    .select()
    .from(streamSchemas)
    .where(and(eq(streamSchemas.streamId, stream.id), eq(streamSchemas.version, stream.currentSchemaVersion)))
    .limit(1);
  return row;
}

async function sourcesOf(db: Db, orgId: string, streamId: string) {
  return db
    .select()
    .from(streamSources)
    .where(and(eq(streamSources.orgId, orgId), eq(streamSources.streamId, streamId)))
    .orderBy(streamSources.id);
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

/** A form's current schema version row, if any. */
async function formSchemaOf(db: Db, form: FormRow) {
  if (form.currentSchemaVersion === null) return undefined;
  const [row] = await db
    .select()
    .from(formSchemas)
    .where(and(eq(formSchemas.formId, form.id), eq(formSchemas.version, form.currentSchemaVersion)))
    .limit(1);
  return row;
}

interface ResolvedSource {
  formId: string | null;
  selector: string | null;
  mapping: Mapping;
  missing: string[];
}

const invalid = (message: string, issues: { path: string; message: string }[], hint?: string) =>
  new ApiError('validation_failed', message, { details: { issues }, ...(hint ? { hint } : {}) });

/**
 * Source inputs checked against the stream schema: exactly one of form_id (a form of this org,
 * 404 otherwise) or selector (a project selector names a project of this org); mappings checked by
 * checkMapping, an omitted one taken as identity; a mapping leaving required fields uncovered is
 * 422 mapping_incomplete with details.missing. `forms` gives each form row for the caller's locks.
 */
async function resolveSources(
  db: Db,
  orgId: string,
  inputs: SourceInput[],
  streamSchema: Record<string, unknown>,
  path = 'sources',
): Promise<ResolvedSource[]> {
  const out: ResolvedSource[] = [];
  const seen = new Set<string>();
  for (const [i, input] of inputs.entries()) {
    const at = inputs.length === 1 && path === 'source' ? path : `${path}[${i}]`;
    if ((input.form_id === undefined) === (input.selector === undefined)) {
      throw invalid('A source needs exactly one of form_id or selector.', [
        { path: at, message: 'give form_id, or selector "tag:<tag>" / "project:<project_id>"' },
      ]);
    }
    let formFields: string[] | null = null;
    if (input.form_id !== undefined) {
      const form = await formOf(db, orgId, input.form_id);
      const schema = await formSchemaOf(db, form);
      formFields = schema ? declaredFields(schema.jsonSchema) : null;
    } else {
      const sel = parseSelector(input.selector as string);
      if (!sel) {
        throw invalid('The selector is invalid.', [
          { path: `${at}.selector`, message: 'use "tag:<tag>" or "project:<project_id>"' },
        ]);
      }
      if (sel.kind === 'project') {
        const [p] = await db
          .select({ id: projects.id })
          .from(projects)
          .where(and(eq(projects.orgId, orgId), eq(projects.id, sel.value)))
          .limit(1);
        if (!p) {
          throw invalid(
            `No project ${sel.value} in this organization.`,
            [{ path: `${at}.selector`, message: 'project selectors name a project id (prj_…)' }],
            'GET /v1/projects lists project ids; a tag selector ("tag:<tag>") matches forms by tag instead.',
          );
        }
      }
    }
    const key = input.form_id ?? (input.selector as string);
    if (seen.has(key)) {
      throw invalid('The same source is listed twice.', [{ path: at, message: `${key} appears more than once` }]);
    }
    seen.add(key);
    const mapping = input.mapping ?? identityMapping(streamSchema, formFields);
    checkMapping(mapping, streamSchema, formFields, `${at}.mapping`);
    const missing = missingFields(mapping, streamSchema);
    if (missing.length) {
      throw new ApiError(
        'mapping_incomplete',
        `The mapping of ${key} leaves required stream fields unmapped: ${missing.join(', ')}.`,
        {
          hint: `Map ${missing.map((m) => `"${m}"`).join(', ')} in ${at}.mapping with {from: <form field>}, {const: <value>} or a default.`,
          details: { missing, source: at },
        },
      );
    }
    out.push({ formId: input.form_id ?? null, selector: input.selector ?? null, mapping, missing });
  }
  return out;
}

async function formOf(db: Db, orgId: string, formId: string): Promise<FormRow> {
  const [form] = await db
    .select()
    .from(forms)
    .where(and(eq(forms.id, formId), eq(forms.orgId, orgId), eq(forms.sandbox, false)))
    .limit(1);
  if (!form) throw notFound('form', formId);
  return form;
}

/** Inside a transaction: the explicit source forms still exist, and stay until it ends. */
async function lockForms(tx: Db, orgId: string, sources: ResolvedSource[]) {
  const ids = sources.map((s) => s.formId).filter((id): id is string => id !== null);
  if (!ids.length) return;
  const found = await tx
    .select({ id: forms.id })
    .from(forms)
    .where(and(eq(forms.orgId, orgId), inArray(forms.id, ids)))
    .for('share');
  const missing = ids.find((id) => !found.some((f) => f.id === id));
  if (missing) throw notFound('form', missing);
}

/** The schema a stream starts from when the body gives none: the first explicit source form's current one. */
async function schemaFromSources(db: Db, orgId: string, inputs: SourceInput[]): Promise<SchemaInput | undefined> {
  for (const input of inputs) {
    if (input.form_id === undefined) continue;
    const form = await formOf(db, orgId, input.form_id);
    const schema = await formSchemaOf(db, form);
    if (schema) {
      return {
        json_schema: schema.jsonSchema,
        ui: schema.ui as Ui,
        changelog: `From form ${form.slug} v${schema.version}`,
      };
    }
  }
  return undefined;
}

const schemaMissing = (streamRef: string) =>
  new ApiError('stream_schema_missing', `Stream ${streamRef} has no schema and no source form has one to start from.`, {
    hint:
      'Pass schema: {json_schema: {...}} (POST /v1/streams) or json_schema (POST /v1/streams/{id}/schema), ' +
      'or attach a form that has a published schema (POST /v1/forms/{id}/schema) and publish with from_form_id.',
  });

/**
 * Creates a stream: schema version 1 (given, or the first source form's current schema; none →
 * 422 stream_schema_missing) and its sources, every mapping complete. Idempotent by slug with
 * if_exists "return".
 */
export async function createStream(
  deps: Deps,
  actor: Actor,
  body: {
    name: string;
    slug?: string;
    schema?: SchemaInput;
    sources?: SourceInput[];
    if_exists?: 'return' | 'error';
  },
) {
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

async function findStream(db: Db, orgId: string, slug: string) {
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

async function insertVersion(tx: Db, actor: Actor, streamId: string, version: number, schema: SchemaInput, now: Date) {
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

/** Inserts sources; one already attached for the same form or selector gets the new mapping instead. */
async function insertSources(
  tx: Db,
  orgId: string,
  streamId: string,
  version: number,
  resolved: ResolvedSource[],
  now: Date,
): Promise<StreamSourceRow[]> {
  const out: StreamSourceRow[] = [];
  for (const s of resolved) {
    const set = {
      mapping: s.mapping,
      mappingStatus: mappingStatus(s.missing),
      missing: s.missing,
      streamSchemaVersion: version,
    };
    const same =
      s.formId !== null ? eq(streamSources.formId, s.formId) : eq(streamSources.selector, s.selector as string);
    const [updated] = await tx
      .update(streamSources)
      .set(set)
      .where(and(eq(streamSources.streamId, streamId), same))
      .returning();
    if (updated) {
      out.push(updated);
      continue;
    }
    const [inserted] = await tx
      .insert(streamSources)
      .values({
        id: newId('streamSource'),
        orgId,
        streamId,
        formId: s.formId,
        selector: s.selector,
        ...set,
        createdAt: now,
      })
      .returning();
    out.push(inserted);
  }
  return out;
}

export async function updateStream(deps: Deps, actor: Actor, id: string, body: { name?: string; slug?: string }) {
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
  body: { json_schema?: Record<string, unknown>; ui?: Ui; changelog?: string; from_form_id?: string },
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

export async function listSources(deps: Deps, actor: Actor, id: string) {
  await getStreamRow(deps.database.db, actor.orgId, id);
  return { data: (await sourcesOf(deps.database.db, actor.orgId, id)).map(presentSource) };
}

/** Attaches sources (all or none), each checked against the stream's current schema. */
export async function attachSources(deps: Deps, actor: Actor, id: string, inputs: SourceInput[]) {
  const db = deps.database.db;
  const stream = await getStreamRow(db, actor.orgId, id);
  const schema = await schemaRow(db, stream);
  if (!schema) throw schemaMissing(id);
  const resolved = await resolveSources(
    db,
    actor.orgId,
    inputs,
    schema.jsonSchema,
    inputs.length === 1 ? 'source' : 'sources',
  );
  const rows = await db.transaction(async (tx) => {
    // The stream's lock orders this against a concurrent publish: the statuses below are for the version that is current.
    const [locked] = await tx
      .select({ version: streams.currentSchemaVersion })
      .from(streams)
      .where(and(eq(streams.id, id), eq(streams.orgId, actor.orgId)))
      .for('update');
    if (!locked) throw notFound('stream', id);
    if (locked.version !== schema.version) {
      throw new ApiError('conflict', 'The stream schema changed while the sources were being attached.', {
        hint: 'Send the request again; it is checked against the new version.',
      });
    }
    await lockForms(tx, actor.orgId, resolved);
    return insertSources(tx, actor.orgId, id, schema.version, resolved, deps.now());
  });
  return { data: rows.map(presentSource) };
}

export async function detachSource(deps: Deps, actor: Actor, id: string, sourceId: string) {
  const db = deps.database.db;
  await getStreamRow(db, actor.orgId, id);
  const deleted = await db
    .delete(streamSources)
    .where(and(eq(streamSources.id, sourceId), eq(streamSources.streamId, id), eq(streamSources.orgId, actor.orgId)))
    .returning({ id: streamSources.id });
  if (!deleted.length) throw notFound('source', sourceId);
}

/** GET /v1/streams/{id}/preview: the newest received submissions of the source forms, mapped. */
export async function previewStream(deps: Deps, actor: Actor, id: string, query: { limit?: number }) {
  const db = deps.database.db;
  const stream = await getStreamRow(db, actor.orgId, id);
  const sources = await sourcesOf(db, actor.orgId, id);
  const empty = { data: [], schema_version: stream.currentSchemaVersion };
  if (!sources.length) return empty;
  const matched = await db
    .select({ id: forms.id, tags: forms.tags, projectId: forms.projectId })
    .from(streamSources)
    .innerJoin(forms, and(eq(forms.orgId, streamSources.orgId), eq(forms.sandbox, false), sourceMatchesForm))
    .where(and(eq(streamSources.orgId, actor.orgId), eq(streamSources.streamId, id)));
  const byForm = new Map(matched.map((f) => [f.id, f]));
  if (!byForm.size) return empty;
  const rows = await db
    .select()
    .from(submissions)
    .where(
      and(
        eq(submissions.orgId, actor.orgId),
        inArray(submissions.formId, [...byForm.keys()]),
        eq(submissions.status, 'received'),
      ),
    )
    .orderBy(desc(submissions.id))
    .limit(query.limit ?? 20);
  return {
    data: rows.flatMap((s) => {
      const source = pickSource(sources, byForm.get(s.formId) as { id: string; tags: string[]; projectId: string });
      if (!source) return [];
      const mapped = applyMapping(source.mapping as Mapping, s.data);
      return [
        {
          submission_id: s.id,
          form_id: s.formId,
          source_id: source.id,
          received_at: s.receivedAt.toISOString(),
          data: mapped.data,
          extras: mapped.extras,
          mapping_status: source.mappingStatus as 'valid' | 'incomplete',
        },
      ];
    }),
    schema_version: stream.currentSchemaVersion,
  };
}

export type FormStream = { id: string; slug: string; mapping_status: 'valid' | 'incomplete' };

/** Form.streams for many forms: each stream a form feeds (explicitly or by selector) and its mapping status. */
export async function streamsOfForms(db: Db, orgId: string, rows: FormRow[]): Promise<Map<string, FormStream[]>> {
  const out = new Map<string, FormStream[]>(rows.map((f) => [f.id, []]));
  if (!rows.length) return out;
  const selectors = [...new Set(rows.flatMap(selectorsOf))];
  const found = await db
    .select({ source: streamSources, slug: streams.slug })
    .from(streamSources)
    .innerJoin(streams, eq(streams.id, streamSources.streamId))
    .where(
      and(
        eq(streamSources.orgId, orgId),
        or(
          inArray(
            streamSources.formId,
            rows.map((f) => f.id),
          ),
          and(isNotNull(streamSources.selector), inArray(streamSources.selector, selectors)),
        ),
      ),
    );
  const byStream = new Map<string, { slug: string; sources: StreamSourceRow[] }>();
  for (const { source, slug } of found) {
    const entry = byStream.get(source.streamId) ?? { slug, sources: [] };
    entry.sources.push(source);
    byStream.set(source.streamId, entry);
  }
  for (const f of rows) {
    for (const [streamId, { slug, sources }] of byStream) {
      const source = pickSource(sources, f);
      if (source) {
        (out.get(f.id) as FormStream[]).push({
          id: streamId,
          slug,
          mapping_status: source.mappingStatus as 'valid' | 'incomplete',
        });
      }
    }
  }
  return out;
}

/**
 * POST /v1/forms {from_template}: after the form is created, its schema version 1 is the stream's
 * current schema, and it is attached with an identity mapping, valid by construction.
 */
export async function attachFromTemplate(deps: Deps, actor: Actor, form: FormRow, streamId: string) {
  const db = deps.database.db;
  const stream = await getStreamRow(db, actor.orgId, streamId);
  const schema = await schemaRow(db, stream);
  if (!schema) throw schemaMissing(streamId);
  const mapping = identityMapping(schema.jsonSchema, null);
  const missing = missingFields(mapping, schema.jsonSchema);
  const now = deps.now();
  await db.transaction(async (tx) => {
    const [locked] = await tx
      .select({ v: forms.currentSchemaVersion })
      .from(forms)
      .where(and(eq(forms.id, form.id), eq(forms.orgId, actor.orgId)))
      .for('update');
    if (!locked) throw notFound('form', form.id);
    if (locked.v === null) {
      await tx.insert(formSchemas).values({
        id: newId('formSchema'),
        orgId: actor.orgId,
        formId: form.id,
        version: 1,
        jsonSchema: schema.jsonSchema,
        ui: schema.ui,
        changelog: `Template of stream ${stream.slug} v${schema.version}`,
        createdBy: actor.keyId ?? actor.userId ?? 'unknown',
        createdAt: now,
      });
      await tx.update(forms).set({ currentSchemaVersion: 1, updatedAt: now }).where(eq(forms.id, form.id));
      await appendEvent(tx, {
        orgId: actor.orgId,
        type: 'form.schema.changed',
        subject: { form_id: form.id },
        data: { version: 1, from_stream: stream.id },
        now,
      });
    }
    await insertSources(
      tx,
      actor.orgId,
      stream.id,
      schema.version,
      [{ formId: form.id, selector: null, mapping, missing }],
      now,
    );
  });
}

/** A route's source check for streams: the stream exists in this organization, locked until the transaction ends. */
export async function lockStream(tx: Db, orgId: string, id: string) {
  const [row] = await tx
    .select({ id: streams.id })
    .from(streams)
    .where(and(eq(streams.id, id), eq(streams.orgId, orgId)))
    .for('share');
  if (!row) throw notFound('stream', id);
}
