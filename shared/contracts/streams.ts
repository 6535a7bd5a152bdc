import {
  body,
  createdOrExisting,
  deleteById,
  errors,
  getById,
  IdParam,
  IfExists,
  json,
  ListQuery,
  listOf,
  listPage,
  op,
  Timestamp,
  z,
} from './common.js';
import { Slug } from './projects.js';
import { Route } from './routes.js';
import { JsonSchema, SchemaUi, SchemaVersion } from './schemas.js';

export const MAPPING_STATUSES = ['valid', 'incomplete'] as const;

export const MappingEntry = z
  .strictObject({
    from: z.string().min(1).max(200).optional().meta({ description: 'the form field whose value is taken' }),
    const: z.unknown().optional().meta({ description: 'a fixed value' }),
    expr: z.string().max(10_000).optional().meta({
      description: 'reserved: answers 422 expressions_not_enabled',
    }),
    default: z.unknown().optional().meta({
      description: 'used when the `from` field is absent, null or ""',
    }),
  })
  .meta({
    id: 'MappingEntry',
    description: 'exactly one of from, const or expr, and optionally default',
  });

export const Mapping = z.record(z.string().min(1).max(200), MappingEntry).meta({
  id: 'Mapping',
  description:
    'keyed by stream field. Omitted on a source: every stream field is taken from the form field of the same name',
});

const Selector = z
  .string()
  .regex(/^(tag|project):.+$/)
  .max(200)
  .meta({ description: '`tag:<tag>` or `project:<project_id>`; matched when a submission arrives' });

export const StreamSourceInput = z
  .strictObject({
    form_id: z.string().optional(),
    selector: Selector.optional(),
    mapping: Mapping.optional(),
  })
  .meta({ id: 'StreamSourceInput', description: 'exactly one of form_id or selector' });

export const StreamSource = z
  .object({
    id: z.string(),
    form_id: z.string().nullable(),
    selector: z.string().nullable(),
    mapping: z.record(z.string(), z.record(z.string(), z.unknown())),
    mapping_status: z.enum(MAPPING_STATUSES),
    missing: z.array(z.string()).meta({ description: 'required stream fields the mapping does not cover' }),
    stream_schema_version: z.number().int().meta({ description: 'the stream schema version it was validated against' }),
    created_at: Timestamp,
  })
  .meta({ id: 'StreamSource' });

export const Stream = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    current_schema_version: z.number().int().nullable(),
    counts: z.object({
      sources: z.number().int(),
      routes: z.number().int(),
      submissions_30d: z.number().int().meta({ description: 'non-test submissions of source forms, last 30 days' }),
    }),
    created_at: Timestamp,
  })
  .meta({ id: 'Stream' });

export const StreamDetail = Stream.extend({
  schema: SchemaVersion.nullable(),
  sources: z.array(StreamSource),
  routes: z.array(Route),
  form_template: SchemaVersion.nullable().meta({
    description: 'the schema a new form gets with POST /v1/forms {from_template: <stream id>}',
  }),
}).meta({ id: 'StreamDetail' });

const StreamSchemaInput = z.strictObject({
  json_schema: JsonSchema,
  ui: SchemaUi.optional(),
  changelog: z.string().max(2000).optional(),
});

export const CreateStreamBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    slug: Slug.optional().meta({ description: 'default: derived from name; unique per organization' }),
    schema: StreamSchemaInput.optional().meta({
      description: 'version 1; without it, the current schema of the first source form that has one',
    }),
    sources: z.array(StreamSourceInput).max(100).optional(),
    if_exists: IfExists,
  })
  .meta({ id: 'CreateStreamBody' });

export const UpdateStreamBody = z
  .strictObject({ name: z.string().min(1).max(200).optional(), slug: Slug.optional() })
  .meta({ id: 'UpdateStreamBody' });

export const PublishStreamSchemaBody = z
  .strictObject({
    json_schema: JsonSchema.optional().meta({ description: 'omitted: taken from from_form_id’s current schema' }),
    ui: SchemaUi.optional(),
    changelog: z.string().max(2000).optional(),
    from_form_id: z.string().optional().meta({ description: 'copy this source form’s current schema' }),
  })
  .meta({ id: 'PublishStreamSchemaBody' });

export const AttachSourcesBody = z
  .union([StreamSourceInput, z.strictObject({ sources: z.array(StreamSourceInput).min(1).max(100) })])
  .meta({ id: 'AttachSourcesBody', description: 'one source, or {sources: [...]}' });

export const PreviewItem = z
  .object({
    submission_id: z.string(),
    form_id: z.string(),
    source_id: z.string(),
    received_at: Timestamp,
    data: z.record(z.string(), z.unknown()).meta({ description: 'the mapped object' }),
    extras: z.record(z.string(), z.unknown()).meta({ description: 'form fields the mapping does not use' }),
    mapping_status: z.enum(MAPPING_STATUSES),
  })
  .meta({ id: 'StreamPreviewItem' });

export const PreviewQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional().meta({ description: 'default 20' }),
});

const SourceParams = IdParam.extend({
  sourceId: z.string().meta({ param: { name: 'sourceId', in: 'path' } }),
});

const tags = ['streams'];

export const streamOps = {
  list: listPage('read', listOf(Stream, 'StreamList'), {
    path: '/v1/streams',
    operationId: 'streams_list',
    tags,
    summary: 'List streams, newest first',
    query: ListQuery,
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/streams',
    operationId: 'streams_create',
    tags,
    summary:
      'Create a stream with its schema (version 1) and sources; every source mapping must cover the required ' +
      'stream fields (422 mapping_incomplete)',
    request: { body: body(CreateStreamBody) },
    responses: {
      ...createdOrExisting(StreamDetail, 'Existing stream (if_exists: "return")'),
      ...errors(
        'unauthorized',
        'forbidden',
        'validation_failed',
        'conflict',
        'not_found',
        'mapping_incomplete',
        'stream_schema_missing',
        'expressions_not_enabled',
        'idempotency_conflict',
      ),
    },
  }),
  get: getById(StreamDetail, {
    path: '/v1/streams/{id}',
    operationId: 'streams_get',
    tags,
    summary: 'One stream with its schema, sources, routes and form_template',
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/streams/{id}',
    operationId: 'streams_update',
    tags,
    summary: 'Rename a stream or change its slug',
    request: { params: IdParam, body: body(UpdateStreamBody) },
    responses: {
      200: json(StreamDetail),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'conflict'),
    },
  }),
  delete: deleteById({
    path: '/v1/streams/{id}',
    operationId: 'streams_delete',
    tags,
    summary: 'Delete a stream with its schema versions, sources, routes and their deliveries',
  }),
  getSchema: op('read', {
    method: 'get',
    path: '/v1/streams/{id}/schema',
    operationId: 'streams_schema_get',
    tags,
    summary: 'The stream’s current schema version',
    request: { params: IdParam },
    responses: { 200: json(SchemaVersion), ...errors('unauthorized', 'not_found', 'stream_schema_missing') },
  }),
  publishSchema: op('manage', {
    method: 'post',
    path: '/v1/streams/{id}/schema',
    operationId: 'streams_schema_publish',
    tags,
    summary:
      'Publish stream schema version n+1 (json_schema, or from_form_id to copy a form’s current schema); ' +
      're-validates every source mapping and appends stream.schema.changed',
    request: { params: IdParam, body: body(PublishStreamSchemaBody) },
    responses: {
      201: json(SchemaVersion, 'Published'),
      ...errors(
        'unauthorized',
        'forbidden',
        'not_found',
        'validation_failed',
        'stream_schema_missing',
        'idempotency_conflict',
      ),
    },
  }),
  listSources: op('read', {
    method: 'get',
    path: '/v1/streams/{id}/sources',
    operationId: 'streams_sources_list',
    tags,
    summary: 'The stream’s sources with their mapping status',
    request: { params: IdParam },
    responses: {
      200: json(z.object({ data: z.array(StreamSource) }).meta({ id: 'StreamSourceList' })),
      ...errors('unauthorized', 'not_found'),
    },
  }),
  attachSources: op('manage', {
    method: 'post',
    path: '/v1/streams/{id}/sources',
    operationId: 'streams_sources_attach',
    tags,
    summary:
      'Attach sources (a form_id or a tag:/project: selector, each with a mapping); an incomplete mapping answers ' +
      '422 mapping_incomplete; attaching the same form or selector again replaces its mapping',
    request: { params: IdParam, body: body(AttachSourcesBody) },
    responses: {
      201: json(z.object({ data: z.array(StreamSource) }).meta({ id: 'StreamSourcesAttached' }), 'Attached'),
      ...errors(
        'unauthorized',
        'forbidden',
        'not_found',
        'validation_failed',
        'mapping_incomplete',
        'stream_schema_missing',
        'expressions_not_enabled',
        'idempotency_conflict',
      ),
    },
  }),
  detachSource: op('manage', {
    method: 'delete',
    path: '/v1/streams/{id}/sources/{sourceId}',
    operationId: 'streams_sources_detach',
    tags,
    summary: 'Detach a source: its forms stop feeding the stream (planned deliveries keep their payload)',
    request: { params: SourceParams },
    responses: { 204: { description: 'Detached' }, ...errors('unauthorized', 'forbidden', 'not_found') },
  }),
  preview: op('read', {
    method: 'get',
    path: '/v1/streams/{id}/preview',
    operationId: 'streams_preview',
    tags,
    summary: 'Recent received submissions of the source forms, mapped through the current mappings',
    request: { params: IdParam, query: PreviewQuery },
    responses: {
      200: json(z.object({ data: z.array(PreviewItem), schema_version: z.number().int().nullable() })),
      ...errors('unauthorized', 'not_found', 'validation_failed'),
    },
  }),
};
