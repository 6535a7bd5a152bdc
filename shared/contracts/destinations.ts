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
import { DeliveryResult } from './deliveries.js';

export const DESTINATION_TYPES = ['email', 'telegram', 'webhook', 'slack', 'discord'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
/** Extension: a destination waiting for a person (settings.approve_destinations). */
export const APPROVALS = ['approved', 'pending'] as const;
export const DESTINATION_HEALTH = ['unknown', 'ok', 'failing'] as const;

/** What a secret reads as: config keys holding secrets (and webhook header values) are never returned. */
export const REDACTED = '[redacted]';

const HttpUrl = z.url({ protocol: /^https?$/ }).max(2000);
const Template = z.string().min(1).max(10_000);
const Emails = z.array(z.email().max(320)).max(50);

export const EmailConfig = z
  .strictObject({
    to: Emails.min(1),
    cc: Emails.optional(),
    subject_template: Template.optional(),
    from_name: z.string().min(1).max(200).optional(),
  })
  .meta({ id: 'EmailConfig' });

export const TelegramConfig = z
  .strictObject({
    bot_token: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: `secret: reads as "${REDACTED}"` }),
    chat_id: z
      .union([z.string().min(1).max(100), z.number().int()])
      .meta({ description: 'chat id or @channel; stored as a string' }),
    template: Template.optional(),
  })
  .meta({ id: 'TelegramConfig' });

export const WebhookConfig = z
  .strictObject({
    url: HttpUrl,
    secret: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .meta({ description: `signs deliveries (Service-Signature); reads as "${REDACTED}"` }),
    headers: z
      .record(z.string().min(1).max(200), z.string().max(2000))
      .optional()
      .meta({ description: `sent with every delivery; values read as "${REDACTED}"` }),
  })
  .meta({ id: 'WebhookConfig' });

/** Slack and Discord: an incoming-webhook URL (stored as `url`) and a template for the message text. */
export const ChatWebhookConfig = z
  .strictObject({
    url: HttpUrl.optional(),
    webhook_url: HttpUrl.optional().meta({ description: 'alias of url' }),
    template: Template.optional(),
  })
  .refine((c) => (c.url === undefined) !== (c.webhook_url === undefined), {
    message: 'give the incoming-webhook URL as url (or webhook_url), once',
    path: ['url'],
  })
  .meta({ id: 'ChatWebhookConfig' });

/** Config schema per destination type; the service validates merged PATCH configs with it too. */
export const CONFIG_SCHEMAS = {
  email: EmailConfig,
  telegram: TelegramConfig,
  webhook: WebhookConfig,
  slack: ChatWebhookConfig,
  discord: ChatWebhookConfig,
} as const satisfies Record<DestinationType, z.ZodType>;

export const Destination = z
  .object({
    id: z.string(),
    type: z.enum(DESTINATION_TYPES),
    name: z.string(),
    config: z.record(z.string(), z.unknown()).meta({ description: `secrets read as "${REDACTED}"` }),
    health: z.enum(DESTINATION_HEALTH),
    verified: z.boolean(),
    enabled: z.boolean().meta({
      description:
        'false: no delivery to it is attempted; they wait as pending until it is enabled again (PATCH {enabled:true})',
    }),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: 'why it is disabled: "gone" (a webhook answered 410), "failing since …", or by hand' }),
    failing_since: Timestamp.nullable().meta({
      description: 'the first failure of the current unbroken run of failures; null after a success',
    }),
    approval: z.enum(APPROVALS).meta({
      description:
        'extension: "pending" when an API key created or re-pointed it while the organization has ' +
        'settings.approve_destinations "keys": its deliveries wait, unattempted, until an owner or admin approves it ' +
        'in the dashboard (approving sends them; rejecting deletes it and skips them with skip_reason "rejected"); otherwise "approved"',
    }),
    created_at: Timestamp,
  })
  .meta({ id: 'Destination' });

export const DestinationCreated = Destination.extend({
  warnings: z.array(z.string()).optional().meta({
    description: 'present when the config was accepted with a doubt, e.g. a Slack URL not on hooks.slack.com',
  }),
}).meta({ id: 'DestinationCreated' });

export const DestinationUpdated = Destination.extend({
  warnings: z
    .array(z.string())
    .optional()
    .meta({ description: 'present when the PATCH dropped something, e.g. a secret left behind by a URL move' }),
}).meta({ id: 'DestinationUpdated' });

const Name = z.string().min(1).max(200);
const createOf = <T extends DestinationType>(type: T) =>
  z.strictObject({ type: z.literal(type), name: Name, config: CONFIG_SCHEMAS[type] });

export const CreateDestinationBody = z
  .discriminatedUnion('type', [
    createOf('email'),
    createOf('telegram'),
    createOf('webhook'),
    createOf('slack'),
    createOf('discord'),
  ])
  .meta({ id: 'CreateDestinationBody' });

export const UpdateDestinationBody = z
  .strictObject({
    name: Name.optional(),
    enabled: z
      .boolean()
      .optional()
      .meta({
        description:
          'false pauses it (its deliveries wait as pending, not attempted); true re-enables it, clears failing_since, ' +
          'and makes every waiting delivery due now',
      }),
    config: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({
        description:
          `merged over the stored config key by key; null removes a key; a secret left out or sent as "${REDACTED}" is kept, ` +
          'unless url moves to another origin (scheme, host, port): then the stored secret and header values not given again are dropped (see warnings)',
      }),
  })
  .meta({ id: 'UpdateDestinationBody' });

export const DestinationListQuery = ListQuery.extend({ type: z.enum(DESTINATION_TYPES).optional() });

const tags = ['destinations'];

export const destinationOps = {
  list: listPage('read', listOf(Destination, 'DestinationList'), {
    path: '/v1/destinations',
    operationId: 'destinations_list',
    tags,
    summary: 'List destinations, newest first (filter: type); secrets are redacted',
    query: DestinationListQuery,
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/destinations',
    operationId: 'destinations_create',
    tags,
    summary:
      'Create an email, telegram, webhook, slack or discord destination (warnings[] notes a chat URL off the provider host)',
    request: { body: body(CreateDestinationBody) },
    responses: {
      201: json(DestinationCreated, 'Created'),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'plan_limit_reached', 'idempotency_conflict'),
    },
  }),
  get: getById(Destination, {
    path: '/v1/destinations/{id}',
    operationId: 'destinations_get',
    tags,
    summary: 'One destination with its config (secrets redacted), health and verified flag',
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/destinations/{id}',
    operationId: 'destinations_update',
    tags,
    summary:
      'Rename a destination or change its config (merged over the stored one; secrets kept unless given, ' +
      'dropped when the URL moves to another host)',
    request: { params: IdParam, body: body(UpdateDestinationBody) },
    responses: {
      200: json(DestinationUpdated),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  delete: deleteById({
    path: '/v1/destinations/{id}',
    operationId: 'destinations_delete',
    tags,
    summary: 'Delete a destination no route uses (409 while routes still point at it)',
    also: ['conflict'],
  }),
  test: op('manage', {
    method: 'post',
    path: '/v1/destinations/{id}/test',
    operationId: 'destinations_test',
    tags,
    summary:
      'Send a sample submission through the real adapter now and report what the destination answered; ' +
      'a success marks it verified and ok (Service-Event: destination.test); 409 approval_pending (extension) while it waits for a person',
    request: { params: IdParam },
    responses: {
      200: json(DeliveryResult, 'What the destination answered (ok false with the error when it failed)'),
      ...errors('unauthorized', 'forbidden', 'not_found', 'approval_pending'),
    },
  }),
  approve: op('session', {
    method: 'post',
    path: '/v1/destinations/{id}/approve',
    operationId: 'destinations_approve',
    tags,
    summary:
      'Extension: approve a destination waiting for a person (approval "pending"); its waiting deliveries are sent now. ' +
      'Owner or admin session only: an API key gets 403',
    request: { params: IdParam },
    responses: {
      200: json(Destination),
      ...errors('unauthorized', 'forbidden', 'not_found', 'conflict'),
    },
  }),
  reject: op('session', {
    method: 'post',
    path: '/v1/destinations/{id}/reject',
    operationId: 'destinations_reject',
    tags,
    summary:
      'Extension: reject a destination waiting for a person: it is deleted with its routes, and its waiting deliveries ' +
      'are skipped with skip_reason "rejected". Owner or admin session only: an API key gets 403',
    request: { params: IdParam },
    responses: {
      204: { description: 'Rejected and deleted' },
      ...errors('unauthorized', 'forbidden', 'not_found', 'conflict'),
    },
  }),
};
