/** Stream rows and the small lookups the stream services share. */
import { and, eq, sql } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { CreateStreamBody, StreamSourceInput } from '../../shared/contracts/streams.js';
import { ApiError, notFound } from '../core/errors.js';
import type { Db } from '../db/client.js';
import type { FormRow, StreamRow } from '../db/rows.js';
import { formSchemas, forms, streamSchemas, streamSources, streams } from '../db/schema.js';

export type { FormRow, StreamRow, StreamSchemaRow, StreamSourceRow } from '../db/rows.js';

export type Ui = Record<string, Record<string, unknown>>;
export type Counts = { sources: number; routes: number; submissions_30d: number };
export type SchemaInput = NonNullable<z.output<typeof CreateStreamBody>['schema']>;
export type SourceInput = z.output<typeof StreamSourceInput>;

/** SQL: does form `f` match source `ss` (its form id, one of its tags, or its project)? */
export const sourceMatchesForm = sql`(
  ${streamSources.formId} = ${forms.id}
  or (${streamSources.selector} like 'tag:%' and ${forms.tags} @> array[substr(${streamSources.selector}, 5)]::text[])
  or ${streamSources.selector} = 'project:' || ${forms.projectId}
)`;

export async function getStreamRow(db: Db, orgId: string, id: string): Promise<StreamRow> {
  const [row] = await db
    .select()
    .from(streams)
    .where(and(eq(streams.id, id), eq(streams.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('stream', id);
  return row;
}

export async function schemaRow(db: Db, stream: StreamRow) {
  if (stream.currentSchemaVersion === null) return undefined;
  const [row] = await db
    .select()
    .from(streamSchemas)
    .where(and(eq(streamSchemas.streamId, stream.id), eq(streamSchemas.version, stream.currentSchemaVersion)))
    .limit(1);
  return row;
}

export async function sourcesOf(db: Db, orgId: string, streamId: string) {
  return db
    .select()
    .from(streamSources)
    .where(and(eq(streamSources.orgId, orgId), eq(streamSources.streamId, streamId)))
    .orderBy(streamSources.id);
}

/** A form's current schema version row, if any. */
export async function formSchemaOf(db: Db, form: FormRow) {
  if (form.currentSchemaVersion === null) return undefined;
  const [row] = await db
    .select()
    .from(formSchemas)
    .where(and(eq(formSchemas.formId, form.id), eq(formSchemas.version, form.currentSchemaVersion)))
    .limit(1);
  return row;
}

export const invalid = (message: string, issues: { path: string; message: string }[], hint?: string) =>
  new ApiError('validation_failed', message, { details: { issues }, ...(hint ? { hint } : {}) });

export async function formOf(db: Db, orgId: string, formId: string): Promise<FormRow> {
  const [form] = await db
    .select()
    .from(forms)
    .where(and(eq(forms.id, formId), eq(forms.orgId, orgId), eq(forms.sandbox, false)))
    .limit(1);
  if (!form) throw notFound('form', formId);
  return form;
}

export const schemaMissing = (streamRef: string) =>
  new ApiError('stream_schema_missing', `Stream ${streamRef} has no schema and no source form has one to start from.`, {
    hint:
      'Pass schema: {json_schema: {...}} (POST /v1/streams) or json_schema (POST /v1/streams/{id}/schema), ' +
      'or attach a form that has a published schema (POST /v1/forms/{id}/schema) and publish with from_form_id.',
  });

/** A route's source check for streams: the stream exists in this organization, locked until the transaction ends. */
export async function lockStream(tx: Db, orgId: string, id: string) {
  const [row] = await tx
    .select({ id: streams.id })
    .from(streams)
    .where(and(eq(streams.id, id), eq(streams.orgId, orgId)))
    .for('share');
  if (!row) throw notFound('stream', id);
}
