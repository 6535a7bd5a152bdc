import { isPlainOrigin, ORIGIN_RULE } from '../origins.js';
import { body, errors, json, NextStep, op, z } from './common.js';
import { Destination } from './destinations.js';
import { Embed, Form, Verify } from './forms.js';
import { Route } from './routes.js';

const ChatHook = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).max(2000),
  template: z.string().min(1).max(10_000).optional(),
});

export const QuickstartBody = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(200)
      .meta({ description: 'form name; the quickstart is idempotent by (project, name)' }),
    project: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/)
      .optional()
      .meta({ description: 'project slug; created when missing; default "default"' }),
    origin: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .refine(isPlainOrigin, { message: `must be ${ORIGIN_RULE}` })
      .optional()
      .meta({ description: "the site's origin: added to the form's settings.allowed_origins" }),
    notify_email: z
      .email()
      .max(320)
      .optional()
      .meta({ description: 'where notifications go; default: the email of the organization owner' }),
    telegram: z
      .strictObject({
        bot_token: z.string().min(1).max(200),
        chat_id: z.union([z.string().min(1).max(100), z.number().int()]),
      })
      .optional(),
    webhook: z
      .strictObject({
        url: z.url({ protocol: /^https?$/ }).max(2000),
        secret: z.string().min(8).max(200).optional().meta({
          description: 'signing secret; default: a generated whsec_… secret, returned once as webhook_signing',
        }),
      })
      .optional(),
    slack: ChatHook.optional().meta({ description: 'a Slack incoming webhook: {url, template?}' }),
    discord: ChatHook.optional().meta({ description: 'a Discord webhook: {url, template?}' }),
  })
  .meta({ id: 'QuickstartBody' });

export const QuickstartResult = z
  .object({
    form: Form,
    embed: Embed,
    verify: Verify,
    next: z.array(NextStep),
    destinations: z
      .array(Destination)
      .meta({ description: 'the destinations the form is routed to (secrets redacted)' }),
    routes: z.array(Route).meta({ description: 'the direct routes of the form to those destinations' }),
    webhook_signing: z
      .object({
        secret: z.string().meta({ description: 'whsec_<base64>; shown only in this answer, reads back as redacted' }),
        verify: z.string().meta({ description: 'how a receiver verifies a delivery with it' }),
      })
      .optional()
      .meta({ description: 'present when the webhook was given without a secret: the one generated for it' }),
    warnings: z
      .array(z.string())
      .optional()
      .meta({ description: 'doubts about what was created, e.g. a Slack URL not on hooks.slack.com' }),
    approval: z
      .object({
        destinations: z.array(z.string()).meta({ description: 'ids of the destinations waiting for a person' }),
        approve_url: z.string().meta({ description: 'the dashboard page where an owner or admin approves them' }),
        message: z.string(),
      })
      .optional()
      .meta({
        description:
          'extension: present when the organization has settings.approve_destinations "keys" and a key made the ' +
          'destinations: a person must approve them before the test delivery can be sent; its deliveries wait until then',
      }),
  })
  .meta({ id: 'QuickstartResult' });

export const quickstartOps = {
  run: op('manage', {
    method: 'post',
    path: '/v1/quickstart',
    operationId: 'quickstart_create',
    tags: ['quickstart'],
    summary:
      'One call to a routed form: creates the project if missing, the form, an email destination (notify_email, ' +
      'else the owner) and a direct route, plus telegram, webhook, slack and discord ones when given. Idempotent by (project, name): ' +
      'a repeat returns the same form and adds only what is missing. Then send a _test submission to verify.',
    request: { body: body(QuickstartBody) },
    responses: {
      201: json(QuickstartResult, 'Created (something was new)'),
      200: json(QuickstartResult, 'Everything existed already'),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'plan_limit_reached'),
    },
  }),
};
