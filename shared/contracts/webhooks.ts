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
import { DeliveryResult, ReplayResult, ReplayWindow } from './deliveries.js';
import { DESTINATION_HEALTH } from './destinations.js';
import { EVENT_TYPES } from './events.js';

export const SYSTEM_WEBHOOK_DELIVERY_STATUSES = ['pending', 'sending', 'sent', 'failed', 'dead'] as const;

const HttpUrl = z.url({ protocol: /^https?$/ }).max(2000);
const Events = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(20)
  .meta({ description: 'event types to receive; duplicates are dropped' });
const Secret = z.string().min(8).max(200);

export const SystemWebhook = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean().meta({
      description: 'false: no event is queued for it, and its queued deliveries wait until it is enabled again',
    }),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: 'why it is disabled: "gone" (it answered 410), "failing since …", or by hand' }),
    failing_since: Timestamp.nullable().meta({
      description: 'the first failure of the current unbroken run of failures; null after a success',
    }),
    health: z.enum(DESTINATION_HEALTH),
    has_secret: z.boolean().meta({ description: 'whether deliveries are signed; the secret itself is never returned' }),
    created_at: Timestamp,
  })
  .meta({ id: 'SystemWebhook' });

export const SystemWebhookUpdated = SystemWebhook.extend({
  warnings: z
    .array(z.string())
    .optional()
    .meta({ description: 'present when the PATCH dropped something, e.g. the secret left behind by a URL move' }),
}).meta({ id: 'SystemWebhookUpdated' });

export const CreateSystemWebhookBody = z
  .strictObject({
    url: HttpUrl,
    events: Events,
    secret: Secret.optional().meta({
      description:
        'signs deliveries (Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">); write-only',
    }),
    enabled: z.boolean().optional().meta({ description: 'default true' }),
  })
  .meta({ id: 'CreateSystemWebhookBody' });

export const UpdateSystemWebhookBody = z
  .strictObject({
    url: HttpUrl.optional(),
    events: Events.optional().meta({ description: 'replaces the subscription list' }),
    secret: Secret.nullable().optional().meta({ description: 'a new secret; null removes it (deliveries unsigned)' }),
    enabled: z.boolean().optional(),
  })
  .meta({ id: 'UpdateSystemWebhookBody' });

export const SystemWebhookDelivery = z
  .object({
    id: z.string(),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(SYSTEM_WEBHOOK_DELIVERY_STATUSES),
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
    payload: z.record(z.string(), z.unknown()).meta({ description: 'the Event, as sent' }),
    last_response: DeliveryResult.nullable().meta({ description: 'null until the first attempt' }),
    last_error: z.string().nullable(),
    created_at: Timestamp,
    sent_at: Timestamp.nullable(),
  })
  .meta({ id: 'SystemWebhookDelivery' });

export const SystemWebhookDeliveryListQuery = ListQuery.extend({
  status: z.enum(SYSTEM_WEBHOOK_DELIVERY_STATUSES).optional(),
});

const tags = ['webhooks'];

export const webhookOps = {
  list: listPage('read', listOf(SystemWebhook, 'SystemWebhookList'), {
    path: '/v1/webhooks',
    operationId: 'webhooks_list',
    tags,
    summary: 'List system webhooks (organization-level event subscriptions), newest first; secrets are never returned',
    query: ListQuery,
    also: ['forbidden'],
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/webhooks',
    operationId: 'webhooks_create',
    tags,
    summary:
      'Subscribe a URL to event types; each new event of those types is POSTed to it as JSON ' +
      '(signed when a secret is set, retried like webhook destinations)',
    request: { body: body(CreateSystemWebhookBody) },
    responses: {
      201: json(SystemWebhook, 'Created'),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'idempotency_conflict'),
    },
  }),
  get: getById(SystemWebhook, {
    path: '/v1/webhooks/{id}',
    operationId: 'webhooks_get',
    tags,
    summary: 'One system webhook: url, subscribed events, enabled, health, has_secret',
    also: ['forbidden'],
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/webhooks/{id}',
    operationId: 'webhooks_update',
    tags,
    summary:
      'Change url, events, secret (null removes it) or enabled; a new url or re-enabling resets health to unknown; ' +
      'a url on another host drops the stored secret unless one is given again',
    request: { params: IdParam, body: body(UpdateSystemWebhookBody) },
    responses: {
      200: json(SystemWebhookUpdated),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  delete: deleteById({
    path: '/v1/webhooks/{id}',
    operationId: 'webhooks_delete',
    tags,
    summary: 'Delete a system webhook together with its deliveries; queued ones are not sent',
  }),
  deliveries: op('read', {
    method: 'get',
    path: '/v1/webhooks/{id}/deliveries',
    operationId: 'webhooks_deliveries',
    tags,
    summary: "A system webhook's deliveries, newest first (filter: status): attempts, next attempt, last response",
    request: { params: IdParam, query: SystemWebhookDeliveryListQuery },
    responses: {
      200: json(listOf(SystemWebhookDelivery, 'SystemWebhookDeliveryList')),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  retryDeliveries: op('manage', {
    method: 'post',
    path: '/v1/webhooks/{id}/deliveries/retry',
    operationId: 'webhooks_deliveries_retry',
    tags,
    summary:
      'Bulk replay of a system webhook\'s deliveries (status default ["dead"], since/until on created_at): each ' +
      'becomes pending and due now with a fresh attempt budget',
    request: { params: IdParam, body: body(ReplayWindow.meta({ id: 'WebhookReplayFilter' })) },
    responses: {
      200: json(ReplayResult),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'idempotency_conflict'),
    },
  }),
};
