import { isAllowedOriginEntry, ORIGIN_RULE } from '../origins.js';
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
  NextStep,
  op,
  Timestamp,
  z,
} from './common.js';
import { Slug, Tags } from './projects.js';
import { AutoresponderSettings, ConfirmSettings } from './submitter.js';

export const SCHEMA_MODES = ['observe', 'enforce', 'managed'] as const;
export const FORM_STATUSES = ['active', 'paused'] as const;

export const RateLimit = z
  .strictObject({ max: z.number().int().min(1).max(100_000), window_s: z.number().int().min(1).max(86_400) })
  .meta({
    id: 'RateLimit',
    description: 'at most `max` stored submissions per client IP per form in `window_s` seconds',
  });

export const TurnstileChallenge = z
  .strictObject({
    provider: z.literal('turnstile'),
    secret: z.string().min(1).max(200).optional(),
    site_key: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,200}$/)
      .optional()
      .meta({ description: 'the Turnstile site key the hosted form page shows the widget with (public)' }),
  })
  .meta({ id: 'TurnstileChallenge', description: 'Cloudflare Turnstile, verified with Cloudflare' });

export const PowChallenge = z
  .strictObject({
    provider: z.literal('pow'),
    difficulty: z.number().int().min(1).max(100_000).optional().meta({
      description:
        'the average number of tries (PBKDF2-SHA-256, 1,000 iterations each) a solver makes; default 1000, about half a second of a phone',
    }),
  })
  .meta({
    id: 'PowChallenge',
    description:
      'Extension of the spec: a proof-of-work challenge in the ALTCHA format, issued at GET /s/{formId}/challenge and verified by formsvc itself; the solution travels in the field `altcha` or the header X-Altcha. A missing, wrong, expired or replayed one stores the submission quarantined with reason challenge_failed.',
  });

export const Challenge = z
  .discriminatedUnion('provider', [TurnstileChallenge, PowChallenge])
  .meta({ id: 'Challenge', description: 'the bot challenge every submission must pass: "turnstile" or "pow"' });

const ListEntries = (what: string) =>
  z.array(z.string().min(1).max(300)).max(1000).optional().meta({ description: what });

export const SpamList = z
  .strictObject({
    emails: ListEntries('addresses, matched whole and case-insensitively'),
    domains: ListEntries('mail domains; a listed domain also matches its subdomains'),
    ips: ListEntries('IP addresses or CIDRs (IPv4 or IPv6), matched against the client IP'),
    keywords: ListEntries('words or phrases, matched case-insensitively on word boundaries in the string values'),
  })
  .meta({ id: 'SpamList' });

export const SpamSettings = z
  .strictObject({
    threshold: z.number().min(0).max(1).optional().meta({
      description: 'the score from which the verdict applies (default 0.8)',
    }),
    action: z.enum(['spam', 'quarantine']).optional().meta({
      description: '"spam" (default) stores as spam; "quarantine" stores quarantined with reason spam_suspected',
    }),
    min_seconds: z.number().min(0).max(3600).optional().meta({
      description: 'a post sooner than this after the page was rendered scores too_fast (default 2)',
    }),
    block: SpamList.optional().meta({ description: 'a match stores the submission as spam' }),
    allow: SpamList.optional().meta({ description: 'a match is never spam (except by the honeypot)' }),
  })
  .meta({ id: 'SpamSettings' });

/** One per person (extension): docs/unique.md. */
export const UniqueSettings = z
  .strictObject({
    fields: z.array(z.string().min(1).max(100)).min(1).max(10).meta({
      description: 'the data fields that identify a person, e.g. ["email"]; compared trimmed and case-folded',
    }),
    window_days: z.number().positive().max(36_500).nullable().optional().meta({
      description: 'how long the first submission holds its values (days); absent or null: for good',
    }),
  })
  .meta({
    id: 'UniqueSettings',
    description:
      'extension: a later received submission with the same values is stored quarantined, reason duplicate, ' +
      'with duplicate_of naming the first; its JSON answer carries duplicate: true',
  });

/** Known settings keys; unknown keys are kept as given (the spec calls settings free-form). */
export const FormSettings = z
  .looseObject({
    allowed_origins: z
      .array(
        z
          .string()
          .min(1)
          .max(300)
          .refine(isAllowedOriginEntry, { message: `must be "*" or ${ORIGIN_RULE}` }),
      )
      .max(100)
      .optional()
      .meta({ description: `sites that may post: "*" or origins, each ${ORIGIN_RULE}` }),
    rate_limit: RateLimit.nullable().optional(),
    honeypot_field: z.string().min(1).max(100).optional(),
    redirect_url: z.url().max(2000).nullable().optional(),
    reply_to_field: z.string().min(1).max(100).nullable().optional(),
    challenge: Challenge.nullable().optional(),
    spam: SpamSettings.nullable().optional().meta({
      description: 'the spam verdict: threshold, action and the block/allow lists (merged with the organization’s)',
    }),
    retention_days: z.number().int().min(1).max(36_500).nullable().optional().meta({
      description: 'delete this form’s submissions after this many days (the plan’s retention wins when shorter)',
    }),
    unique: UniqueSettings.nullable().optional(),
    autoresponder: AutoresponderSettings.nullable().optional(),
    confirm: ConfirmSettings.nullable().optional(),
  })
  .meta({ id: 'FormSettings' });

export const Embed = z
  .object({ html: z.string(), fetch: z.string(), react: z.string(), astro: z.string(), nextjs_action: z.string() })
  .meta({ id: 'Embed' });

export const Verify = z.object({ curl: z.string(), then: z.string() }).meta({ id: 'Verify' });

export const Form = z
  .object({
    id: z.string(),
    project_id: z.string(),
    slug: z.string(),
    name: z.string(),
    tags: z.array(z.string()),
    status: z.enum(FORM_STATUSES),
    schema_mode: z.enum(SCHEMA_MODES),
    current_schema_version: z.number().int().nullable(),
    settings: z.record(z.string(), z.unknown()),
    submit_url: z.string(),
    hosted_url: z
      .string()
      .meta({ description: 'the public form page (GET /f/{formId}) rendered from the current schema' }),
    streams: z.array(z.object({ id: z.string(), slug: z.string(), mapping_status: z.enum(['valid', 'incomplete']) })),
    counts: z.object({ submissions: z.number().int(), last_submission_at: Timestamp.nullable() }),
    created_at: Timestamp,
  })
  .meta({ id: 'Form' });

export const FormCreated = Form.extend({ embed: Embed, verify: Verify, next: z.array(NextStep) }).meta({
  id: 'FormCreated',
});

export const CreateFormBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    project: Slug.optional().meta({ description: 'project slug; created when missing; default "default"' }),
    slug: Slug.optional().meta({ description: 'default: derived from name; unique per project' }),
    tags: Tags.optional(),
    schema_mode: z.enum(SCHEMA_MODES).optional(),
    from_template: z.string().optional().meta({ description: 'a stream id: the form is created attached to it' }),
    if_exists: IfExists,
  })
  .meta({ id: 'CreateFormBody' });

export const UpdateFormBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    tags: Tags.optional(),
    status: z.enum(FORM_STATUSES).optional(),
    schema_mode: z.enum(SCHEMA_MODES).optional(),
    settings: FormSettings.optional().meta({
      description: 'merged into the current settings key by key; a key set to null is removed',
    }),
  })
  .meta({ id: 'UpdateFormBody' });

export const FormListQuery = ListQuery.extend({
  project: z.string().optional().meta({ description: 'project id or slug' }),
  tag: z.string().optional(),
  status: z.enum(FORM_STATUSES).optional(),
});

const tags = ['forms'];

export const formOps = {
  list: listPage('read', listOf(Form, 'FormList'), {
    path: '/v1/forms',
    operationId: 'forms_list',
    tags,
    summary: 'List forms, newest first (filters: project, tag, status)',
    query: FormListQuery,
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/forms',
    operationId: 'forms_create',
    tags,
    summary: 'Create a form; answers submit_url, embed snippets, a verify curl and next steps',
    request: { body: body(CreateFormBody) },
    responses: {
      ...createdOrExisting(FormCreated, 'Existing form (if_exists: "return")'),
      ...errors(
        'unauthorized',
        'forbidden',
        'validation_failed',
        'conflict',
        'not_found',
        'plan_limit_reached',
        'idempotency_conflict',
      ),
    },
  }),
  get: getById(Form, {
    path: '/v1/forms/{id}',
    operationId: 'forms_get',
    tags,
    summary: 'One form with its counts and streams',
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/forms/{id}',
    operationId: 'forms_update',
    tags,
    summary: 'Change name, tags, status (active/paused), schema_mode or settings',
    request: { params: IdParam, body: body(UpdateFormBody) },
    responses: { 200: json(Form), ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed') },
  }),
  delete: deleteById({
    path: '/v1/forms/{id}',
    operationId: 'forms_delete',
    tags,
    summary: 'Delete a form with its submissions, routes and deliveries',
  }),
  embed: op('read', {
    method: 'get',
    path: '/v1/forms/{id}/embed',
    operationId: 'forms_embed',
    tags,
    summary: 'Embed snippets (html, fetch, react, astro, Next.js action) for the form',
    request: { params: IdParam },
    responses: { 200: json(Embed), ...errors('unauthorized', 'not_found') },
  }),
};
