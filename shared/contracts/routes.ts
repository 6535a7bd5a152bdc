import {
  body,
  deleteById,
  errors,
  getById,
  IdParam,
  json,
  ListQuery,
  listOf,
  listPage,
  op,
  Timestamp,
  z,
} from './common.js';

export const RouteMode = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('instant') }),
    z.strictObject({
      type: z.literal('digest'),
      cron: z.string().min(1).max(200).meta({ description: 'when a period closes, e.g. "0 9 * * *"' }),
      timezone: z.string().min(1).max(100).meta({ description: 'IANA zone the cron is read in, e.g. "Europe/Berlin"' }),
    }),
  ])
  .meta({ id: 'RouteMode', description: 'instant (default): one delivery per submission; digest: one per period' });

const Instant = z.iso.datetime({ offset: true });

export const RouteWindow = z
  .strictObject({ from: Instant.nullable().optional(), until: Instant.nullable().optional() })
  .meta({ id: 'RouteWindow', description: 'submissions outside [from, until] are skipped; null = open' });

export const RouteQuality = z
  .strictObject({ exclude_spam: z.boolean().optional(), exclude_quarantined: z.boolean().optional() })
  .meta({ id: 'RouteQuality', description: 'both default to true' });

const Expression = z
  .string()
  .max(10_000)
  .nullable()
  .optional()
  .meta({ description: 'reserved: any value other than null answers 422 expressions_not_enabled' });

export const RouteMatch = z.record(z.string(), z.unknown()).meta({
  id: 'RouteMatch',
  description:
    'extension: a JSON condition a submission must meet for this route to deliver it, else its delivery is ' +
    'skipped with skip_reason "match". Keys are dotted paths rooted at data, meta or submission (test, status) ' +
    'or the combinators $and, $or (lists) and $not; a path takes a bare value ($eq) or operators $eq $ne $in ' +
    '$nin $gt $gte $lt $lte $exists $contains $not. On a stream route, data is the mapped payload. At most 8 ' +
    'levels deep and 100 parts. Example: {"data.topic": "sales", "data.seats": {"$gte": 5}}',
});

export const Route = z
  .object({
    id: z.string(),
    form_id: z.string().nullable(),
    stream_id: z.string().nullable(),
    destination_id: z.string(),
    enabled: z.boolean(),
    mode: z.union([
      z.object({ type: z.literal('instant') }),
      z.object({ type: z.literal('digest'), cron: z.string(), timezone: z.string() }),
    ]),
    window: z.object({ from: Timestamp.nullable(), until: Timestamp.nullable() }),
    quality: z.object({ exclude_spam: z.boolean(), exclude_quarantined: z.boolean() }),
    filter: z.string().nullable(),
    transform: z.string().nullable(),
    match: RouteMatch.nullable().meta({ description: 'extension: null when the route takes every submission' }),
    counts: z.object({
      deliveries: z.number().int().meta({ description: 'deliveries planned for this route' }),
      sent: z.number().int().meta({ description: 'of which sent' }),
    }),
    created_at: Timestamp,
  })
  .meta({ id: 'Route' });

export const CreateRouteBody = z
  .strictObject({
    form_id: z.string().optional(),
    stream_id: z.string().optional(),
    destination_id: z.string(),
    mode: RouteMode.optional(),
    window: RouteWindow.optional(),
    quality: RouteQuality.optional(),
    enabled: z.boolean().optional().meta({ description: 'default true' }),
    filter: Expression,
    transform: Expression,
    match: RouteMatch.nullable().optional(),
  })
  .refine((b) => (b.form_id === undefined) !== (b.stream_id === undefined), {
    message: 'give exactly one source: form_id or stream_id',
    path: ['form_id'],
  })
  .meta({ id: 'CreateRouteBody', description: 'exactly one of form_id and stream_id' });

export const UpdateRouteBody = z
  .strictObject({
    destination_id: z.string().optional(),
    mode: RouteMode.optional(),
    window: RouteWindow.optional().meta({ description: 'merged over the current window' }),
    quality: RouteQuality.optional().meta({ description: 'merged over the current quality' }),
    enabled: z.boolean().optional(),
    filter: Expression,
    transform: Expression,
    match: RouteMatch.nullable().optional().meta({ description: 'replaces the condition; null removes it' }),
  })
  .meta({ id: 'UpdateRouteBody', description: 'the source (form_id or stream_id) cannot change' });

export const RouteListQuery = ListQuery.extend({
  form_id: z.string().optional(),
  stream_id: z.string().optional(),
  destination_id: z.string().optional(),
});

const tags = ['routes'];

export const routeOps = {
  list: listPage('read', listOf(Route, 'RouteList'), {
    path: '/v1/routes',
    operationId: 'routes_list',
    tags,
    summary: 'List routes, newest first (filters: form_id, stream_id, destination_id)',
    query: RouteListQuery,
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/routes',
    operationId: 'routes_create',
    tags,
    summary: 'Connect a form (or stream) to a destination: mode, window, quality, match, enabled',
    request: { body: body(CreateRouteBody) },
    responses: {
      201: json(Route, 'Created'),
      ...errors(
        'unauthorized',
        'forbidden',
        'validation_failed',
        'expressions_not_enabled',
        'not_found',
        'idempotency_conflict',
      ),
    },
  }),
  get: getById(Route, {
    path: '/v1/routes/{id}',
    operationId: 'routes_get',
    tags,
    summary: 'One route with its delivery counts',
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/routes/{id}',
    operationId: 'routes_update',
    tags,
    summary: 'Change destination, mode, window, quality, match or enabled (not the source)',
    request: { params: IdParam, body: body(UpdateRouteBody) },
    responses: {
      200: json(Route),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'expressions_not_enabled'),
    },
  }),
  delete: deleteById({
    path: '/v1/routes/{id}',
    operationId: 'routes_delete',
    tags,
    summary: 'Delete a route: nothing more is planned through it; deliveries already planned are kept',
  }),
};
