import { body, errors, getById, IdParam, json, ListQuery, listOf, listPage, op, Timestamp, z } from './common.js';
import { DELIVERY_KINDS } from './submitter.js';

/**
 * `held`: planned for an over-quota submission; never claimed, no next_attempt_at. The housekeeping
 * job makes it `pending` (due at once) when the organization's plan allows again.
 */
export const DELIVERY_STATUSES = ['pending', 'sending', 'sent', 'failed', 'dead', 'skipped', 'held'] as const;
/**
 * Extensions: `match`, the route's condition did not match the submission; `limit`, mail to a
 * submitter over an abuse limit or to a disposable or blocked domain; `rejected`, waiting for a
 * destination a person rejected (settings.approve_destinations).
 */
export const SKIP_REASONS = ['window', 'quality', 'erased', 'match', 'limit', 'rejected'] as const;

export const DeliveryResult = z
  .object({
    ok: z.boolean(),
    status_code: z.number().int().nullable(),
    latency_ms: z.number(),
    response_excerpt: z.string(),
    error: z.string().nullable(),
  })
  .meta({ id: 'DeliveryResult', description: 'What the destination answered on the last attempt' });

export const Delivery = z
  .object({
    id: z.string(),
    submission_id: z.string().nullable().meta({ description: 'null for digest deliveries (one per period)' }),
    route_id: z
      .string()
      .meta({ description: 'the route; "autoresponder" or "confirmation" for mail to the submitter' }),
    destination_id: z.string().meta({ description: 'the destination; "submitter" for mail to the submitter' }),
    kind: z.enum(DELIVERY_KINDS).optional().meta({
      description:
        'extension: present on mail to the submitter only, "autoresponder" or "confirmation" (settings of the form); absent on route deliveries',
    }),
    status: z.enum(DELIVERY_STATUSES).meta({
      description:
        'pending → sending → sent | failed (retried) | dead; skipped when planned outside the window or quality ' +
        "or not matching the route's match (extension); " +
        'held while its submission is over the monthly quota (released to pending when the plan allows)',
    }),
    skip_reason: z
      .enum(SKIP_REASONS)
      .nullable()
      .meta({
        description:
          'why a skipped delivery was not sent; "match" (extension): the route\'s condition did not match; ' +
          '"rejected" (extension): it waited for a destination an owner or admin rejected',
      }),
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
    schema_version: z.number().int().nullable().meta({ description: 'stream schema version the payload conforms to' }),
    payload: z.record(z.string(), z.unknown()).meta({ description: 'snapshot actually sent' }),
    last_response: DeliveryResult.nullable().meta({ description: 'null until the first attempt' }),
    last_error: z.string().nullable(),
    created_at: Timestamp,
    sent_at: Timestamp.nullable(),
  })
  .meta({ id: 'Delivery' });

export const DeliveryListQuery = ListQuery.extend({
  status: z.enum(DELIVERY_STATUSES).optional(),
  form_id: z.string().optional(),
  route_id: z.string().optional(),
  destination_id: z.string().optional(),
  submission_id: z.string().optional(),
});

/** Statuses a bulk retry may select: the ones that are not queued already. */
export const REPLAY_STATUSES = ['dead', 'failed'] as const;
const Instant = z.iso.datetime({ offset: true });

/** The time and status part of a bulk retry's filter (system webhooks take only this). */
export const ReplayWindow = z.strictObject({
  status: z
    .array(z.enum(REPLAY_STATUSES))
    .min(1)
    .optional()
    .meta({ description: 'statuses to queue again; default ["dead"]' }),
  since: Instant.optional().meta({
    description: 'only deliveries created at or after this ISO 8601 timestamp',
    example: '2026-01-01T00:00:00Z',
  }),
  until: Instant.optional().meta({ description: 'only deliveries created before this ISO 8601 timestamp' }),
});

export const ReplayFilter = ReplayWindow.extend({
  destination_id: z.string().optional().meta({
    description: 'only deliveries to this destination ("submitter", an extension: mail to submitters)',
  }),
  route_id: z.string().optional().meta({
    description:
      'only deliveries of this route ("autoresponder" or "confirmation", an extension: that mail to submitters)',
  }),
  form_id: z.string().optional().meta({ description: 'only deliveries of submissions to this form' }),
}).meta({
  id: 'ReplayFilter',
  description: 'Which deliveries to queue again; at least one of destination_id, route_id, form_id or since',
});

export const ReplayResult = z
  .object({
    matched: z.number().int().meta({ description: 'deliveries the filter selected' }),
    queued: z.number().int().meta({ description: 'of those, queued again (others changed status meanwhile)' }),
  })
  .meta({ id: 'ReplayResult' });

const tags = ['deliveries'];

export const deliveryOps = {
  list: listPage('read', listOf(Delivery, 'DeliveryList'), {
    path: '/v1/deliveries',
    operationId: 'deliveries_list',
    tags,
    summary:
      'List deliveries, newest first (filters: status, form_id, route_id, destination_id, submission_id); ' +
      'poll a _test submission’s delivery ids here',
    query: DeliveryListQuery,
    also: ['forbidden'],
  }),
  get: getById(Delivery, {
    path: '/v1/deliveries/{id}',
    operationId: 'deliveries_get',
    tags,
    summary: 'One delivery: status, attempts, next attempt, payload sent and the last response',
    also: ['forbidden'],
  }),
  retry: op('manage', {
    method: 'post',
    path: '/v1/deliveries/{id}/retry',
    operationId: 'deliveries_retry',
    tags,
    summary:
      'Send a dead, failed or sent delivery again: it becomes pending and due now with a fresh attempt budget ' +
      '(same payload, same Service-Delivery id); pending, sending, skipped and held deliveries answer 409',
    request: { params: IdParam },
    responses: {
      202: json(Delivery, 'Queued again'),
      ...errors('unauthorized', 'forbidden', 'not_found', 'conflict'),
    },
  }),
  retryAll: op('manage', {
    method: 'post',
    path: '/v1/deliveries/retry',
    operationId: 'deliveries_retry_all',
    tags,
    summary:
      'Bulk replay: every delivery of the organization matching the filter (status default ["dead"], destination_id, ' +
      'route_id, form_id, since/until on created_at; at least one of destination_id, route_id, form_id, since) ' +
      'becomes pending and due now with a fresh attempt budget, as a single retry does',
    request: { body: body(ReplayFilter) },
    responses: {
      200: json(ReplayResult),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'idempotency_conflict'),
    },
  }),
};
