import { errors, json, ListQuery, listOf, op, Timestamp, z } from './common.js';

export const DRIFT_KINDS = ['new_field', 'missing_field', 'type_change'] as const;
export const DRIFT_STATUSES = ['open', 'closed', 'dismissed'] as const;

export const DriftEvent = z
  .object({
    id: z.string().meta({ description: 'dr_ id' }),
    form_id: z.string(),
    field: z.string().meta({ description: 'top-level data field the drift is about' }),
    kind: z.enum(DRIFT_KINDS).meta({
      description:
        'new_field: a field the schema does not declare; missing_field: a required field absent; ' +
        'type_change: a value whose JSON type the schema does not allow',
    }),
    details: z.record(z.string(), z.unknown()).meta({
      description:
        'as first seen: new_field {observed_type}; missing_field {required: true}; type_change {expected[], observed}',
    }),
    status: z.enum(DRIFT_STATUSES).meta({
      description: 'open until a new schema version is published (closed) or it is dismissed',
    }),
    count: z.number().int().min(1).meta({ description: 'submissions that raised it' }),
    schema_version: z.number().int().nullable().meta({ description: 'the schema version the data was compared with' }),
    first_submission_id: z.string(),
    last_submission_id: z.string(),
    created_at: Timestamp,
    last_seen_at: Timestamp,
    closed_at: Timestamp.nullable().meta({ description: 'when it was closed or dismissed' }),
  })
  .meta({ id: 'DriftEvent' });

export const DriftListQuery = ListQuery.extend({
  status: z
    .enum([...DRIFT_STATUSES, 'all'])
    .optional()
    .meta({ description: 'open (default), closed, dismissed, or all' }),
});

const FormParam = z.object({ id: z.string().meta({ param: { name: 'id', in: 'path' } }) });
const DriftParams = FormParam.extend({ driftId: z.string().meta({ param: { name: 'driftId', in: 'path' } }) });

const tags = ['drift'];

export const driftOps = {
  list: op('read', {
    method: 'get',
    path: '/v1/forms/{id}/drift',
    operationId: 'drift_list',
    tags,
    summary:
      'Drift between the form’s current schema and real submissions, newest first: one event per ' +
      '(field, kind) with a count; open ones unless status says otherwise',
    request: { params: FormParam, query: DriftListQuery },
    responses: {
      200: json(listOf(DriftEvent, 'DriftEventList')),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  dismiss: op('manage', {
    method: 'post',
    path: '/v1/forms/{id}/drift/{driftId}/dismiss',
    operationId: 'drift_dismiss',
    tags,
    summary:
      'Dismiss an open drift event: it stops being listed as open, and the same (field, kind) stays silent ' +
      '(counted into the dismissed event, no drift.detected) until a new schema version is published; ' +
      '409 when it is not open',
    request: { params: DriftParams },
    responses: {
      200: json(DriftEvent, 'Dismissed'),
      ...errors('unauthorized', 'forbidden', 'not_found', 'conflict'),
    },
  }),
};
