/** Stream sources: checking, attaching and detaching them, and the from_template attachment. */
import { and, eq, inArray } from 'drizzle-orm';
import { ops } from '../../shared/contracts/index.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import type { Db } from '../db/client.js';
import type { FormRow, StreamSourceRow } from '../db/rows.js';
import { formSchemas, forms, projects, streamSources, streams } from '../db/schema.js';
import { appendEvent } from '../events.js';
import { presentSource } from '../present/streams.js';
import {
  checkMapping,
  declaredFields,
  identityMapping,
  type Mapping,
  mappingStatus,
  missingFields,
  parseSelector,
} from '../streams/mapping.js';
import {
  formOf,
  formSchemaOf,
  getStreamRow,
  invalid,
  type SchemaInput,
  type SourceInput,
  schemaMissing,
  schemaRow,
  sourcesOf,
  type Ui,
} from '../streams/rows.js';
import { routeOf } from './next-steps.js';

export interface ResolvedSource {
  formId: string | null;
  selector: string | null;
  mapping: Mapping;
  missing: string[];
}

/**
 * Source inputs checked against the stream schema: exactly one of form_id (a form of this org,
 * 404 otherwise) or selector (a project selector names a project of this org); mappings checked by
 * checkMapping, an omitted one taken as identity; a mapping leaving required fields uncovered is
 * 422 mapping_incomplete with details.missing. `forms` gives each form row for the caller's locks.
 */
export async function resolveSources(
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
            `${routeOf(ops.projects.list)} lists project ids; a tag selector ("tag:<tag>") matches forms by tag instead.`,
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

/** Inside a transaction: the explicit source forms still exist, and stay until it ends. */
export async function lockForms(tx: Db, orgId: string, sources: ResolvedSource[]) {
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
export async function schemaFromSources(
  db: Db,
  orgId: string,
  inputs: SourceInput[],
): Promise<SchemaInput | undefined> {
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

/** Inserts sources; one already attached for the same form or selector gets the new mapping instead. */
export async function insertSources(
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
