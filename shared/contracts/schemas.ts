import { body, errors, IdParam, json, ListQuery, listOf, op, Timestamp, z } from './common.js';

const FormIdParam = z.object({ formId: z.string().meta({ param: { name: 'formId', in: 'path' } }) });

const OptionValue = z.union([z.string().max(500), z.number(), z.boolean()]);

/** Presentation hints for one field; the schema itself says what is valid. */
export const UiHint = z
  .strictObject({
    label: z.string().max(200).optional(),
    placeholder: z.string().max(200).optional(),
    order: z.number().int().optional(),
    widget: z.string().min(1).max(50).optional().meta({ description: 'e.g. textarea, select, radio, checkbox' }),
    help: z.string().max(1000).optional(),
    options: z
      .array(z.union([OptionValue, z.strictObject({ value: OptionValue, label: z.string().max(200).optional() })]))
      .max(500)
      .optional(),
  })
  .meta({ id: 'UiHint' });

export const SchemaUi = z
  .record(z.string().min(1).max(200), UiHint)
  .meta({ id: 'SchemaUi', description: 'hints keyed by field name' });

export const JsonSchema = z
  .record(z.string(), z.unknown())
  .meta({ description: 'JSON Schema draft 2020-12 with an object root; $refs stay inside the document' });

export const SchemaVersion = z
  .object({
    version: z.number().int().min(1),
    json_schema: JsonSchema,
    ui: SchemaUi,
    changelog: z.string(),
    inferred: z.boolean().meta({ description: 'true when published from an inferred draft' }),
    created_at: Timestamp,
    created_by: z.string().meta({ description: 'the API key id or user id that published it' }),
  })
  .meta({ id: 'SchemaVersion' });

export const PublishSchemaBody = z
  .strictObject({
    json_schema: JsonSchema,
    ui: SchemaUi.optional(),
    changelog: z.string().max(2000).optional(),
    inferred: z.boolean().optional().meta({
      description: 'true when publishing a draft from POST /v1/forms/{id}/schema/infer (the draft carries it)',
    }),
  })
  .meta({ id: 'PublishSchemaBody' });

export const InferSchemaBody = z
  .strictObject({
    limit: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: 'newest submissions to read, default 200' }),
    include_test: z.boolean().optional().meta({ description: 'also read _test submissions (default false)' }),
  })
  .meta({ id: 'InferSchemaBody' });

export const InferredField = z
  .object({
    name: z.string(),
    types: z.array(z.string()).meta({ description: 'JSON types seen (integer when every number was whole)' }),
    presence: z.number().min(0).max(1).meta({
      description: 'share of samples with a non-empty value; >= 0.95 makes the field required',
    }),
    format: z.string().optional().meta({ description: 'email, date-time, date or uri when every string sample fits' }),
    enum: z.array(z.string()).optional().meta({ description: 'the closed set of values, when small and repeated' }),
  })
  .meta({ id: 'InferredField' });

export const InferredSchema = z
  .object({
    draft: z
      .object({
        json_schema: JsonSchema,
        ui: SchemaUi,
        changelog: z.string(),
        inferred: z.literal(true),
      })
      .meta({ description: 'POST it unchanged to /v1/forms/{id}/schema to publish it (after review)' }),
    sample_size: z.number().int().min(1),
    fields: z.array(InferredField),
  })
  .meta({ id: 'InferredSchema' });

export const PublicSchema = z
  .object({ form_id: z.string(), version: z.number().int(), json_schema: JsonSchema, ui: SchemaUi })
  .meta({ id: 'PublicSchema' });

const tags = ['schemas'];

export const schemaOps = {
  get: op('read', {
    method: 'get',
    path: '/v1/forms/{id}/schema',
    operationId: 'schemas_get',
    tags,
    summary: "The form's current schema version (404 until one is published)",
    request: { params: IdParam },
    responses: { 200: json(SchemaVersion), ...errors('unauthorized', 'forbidden', 'not_found') },
  }),
  publish: op('manage', {
    method: 'post',
    path: '/v1/forms/{id}/schema',
    operationId: 'schemas_publish',
    tags,
    summary:
      'Publish a new immutable schema version (n+1) and make it current; enforce and managed forms ' +
      'quarantine submissions that violate it (emits form.schema.changed)',
    request: { params: IdParam, body: body(PublishSchemaBody) },
    responses: {
      201: json(SchemaVersion, 'Published'),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'idempotency_conflict'),
    },
  }),
  infer: op('manage', {
    method: 'post',
    path: '/v1/forms/{id}/schema/infer',
    operationId: 'schemas_infer',
    tags,
    summary:
      'Build a draft schema (flagged inferred) from the form’s recent received submissions: types, presence ' +
      '(required at >= 95 %), formats, small enums and ui hints. Nothing is published: review the draft, then ' +
      'POST it to /v1/forms/{id}/schema',
    request: {
      params: IdParam,
      body: { required: false, content: { 'application/json': { schema: InferSchemaBody } } },
    },
    responses: {
      200: json(InferredSchema, 'A draft for review'),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'idempotency_conflict'),
    },
  }),
  versions: op('read', {
    method: 'get',
    path: '/v1/forms/{id}/schema/versions',
    operationId: 'schemas_versions',
    tags,
    summary: 'Every schema version of a form, newest first; versions are never edited',
    request: { params: IdParam, query: ListQuery },
    responses: {
      200: json(listOf(SchemaVersion, 'SchemaVersionList')),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  public: op('public', {
    method: 'get',
    path: '/s/{formId}/schema',
    operationId: 'schemas_public',
    tags,
    summary:
      'The current schema and ui hints of a managed form, for rendering it in a browser; no credentials, ' +
      'CORS-open (Access-Control-Allow-Origin: *), cacheable for 60 s',
    request: { params: FormIdParam },
    responses: { 200: json(PublicSchema), ...errors('not_found') },
  }),
  publicPreflight: op('public', {
    method: 'options',
    path: '/s/{formId}/schema',
    operationId: 'schemas_public_preflight',
    tags,
    summary: 'CORS preflight of the public schema: any origin may GET it',
    request: { params: FormIdParam },
    responses: { 204: { description: 'Preflight answer' } },
  }),
};
