import { errors, json, op, z } from './common.js';

const FormIdParam = z.object({ formId: z.string().meta({ param: { name: 'formId', in: 'path' } }) });

export const SubmitResult = z
  .object({
    ok: z.boolean(),
    submission_id: z.string(),
    status: z.enum(['received', 'quarantined', 'spam']),
    idempotent: z.boolean().optional(),
    deliveries: z.array(z.string()).optional().meta({ description: 'delivery ids, for _test submissions' }),
    attachments: z.array(z.object({ id: z.string() })).optional(),
    duplicate: z.boolean().optional().meta({
      description:
        'extension: true when settings.unique found the same values already received (stored quarantined, reason duplicate)',
    }),
  })
  .meta({ id: 'SubmitResult' });

export const PowChallengeBody = z
  .object({
    parameters: z.object({
      algorithm: z.string().meta({ description: 'PBKDF2/SHA-256' }),
      nonce: z.string(),
      salt: z.string(),
      cost: z.number().int(),
      keyLength: z.number().int(),
      keyPrefix: z.string(),
      keySignature: z.string().optional(),
      expiresAt: z.number().int().meta({ description: 'unix seconds' }),
      data: z.record(z.string(), z.unknown()).optional(),
    }),
    signature: z.string(),
  })
  .meta({ id: 'PowChallengeBody' });

export const RenderToken = z
  .object({
    token: z.string().meta({
      description:
        'the signed render time `<signature>.<issued unix ms>`, for this form only: post it back as the `_rendered` field',
    }),
  })
  .meta({ id: 'RenderToken' });

/** Described, not validated by the router: the intake parses the three encodings itself. */
const anyBody = { type: 'object', additionalProperties: true } as const;

export const intakeOps = {
  submit: op('public', {
    method: 'post',
    path: '/s/{formId}',
    operationId: 'intake_submit',
    tags: ['intake'],
    summary:
      'Submit to a form without credentials: stored first with a status, then routed. JSON, urlencoded or multipart (files).',
    description:
      'Control fields (names starting with "_", cf-turnstile-response and altcha) are removed from data: _redirect, _gotcha (honeypot), _test, _idempotency, _subject, _rendered (extension: the signed render time from GET /s/{formId}/render, scored by the spam verdict). HTML form posts get 303 to _redirect, the form redirect_url, or a hosted thanks page.',
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Same as the _idempotency field: unique per form; a repeat answers the original submission with idempotent: true',
        schema: { type: 'string' },
      },
      {
        name: 'X-Altcha',
        in: 'header',
        required: false,
        description:
          'Extension: the proof-of-work solution (the altcha widget payload, base64 JSON), instead of the field `altcha`',
        schema: { type: 'string' },
      },
    ],
    request: {
      params: FormIdParam,
      body: {
        content: {
          'application/json': { schema: anyBody },
          'application/x-www-form-urlencoded': { schema: anyBody },
          'multipart/form-data': { schema: anyBody },
        },
      },
    },
    responses: {
      200: json(SubmitResult, 'Stored (received, spam or quarantined)'),
      202: json(SubmitResult, 'Stored; the form is paused, nothing is routed'),
      303: {
        description: 'HTML form post: redirect to _redirect, redirect_url or the thanks page',
        headers: {
          Location: {
            description: 'where the browser goes next',
            required: true,
            schema: { type: 'string', format: 'uri-reference' },
          },
        },
      },
      ...errors(
        'bad_request',
        'attachment_storage_limit_reached',
        'origin_rejected',
        'not_found',
        'payload_too_large',
        'attachment_too_large',
        'attachment_limit_reached',
        'unsupported_media_type',
        'rate_limited',
        'attachment_storage_unavailable',
      ),
    },
  }),
  preflight: op('public', {
    method: 'options',
    path: '/s/{formId}',
    operationId: 'intake_preflight',
    tags: ['intake'],
    summary: "CORS preflight: allowed when the form's allowed_origins is empty or lists the origin",
    request: { params: FormIdParam },
    responses: { 204: { description: 'Preflight answer' }, ...errors('not_found') },
  }),
  challenge: op('public', {
    method: 'get',
    path: '/s/{formId}/challenge',
    operationId: 'intake_challenge',
    tags: ['intake'],
    summary:
      'Extension: a proof-of-work challenge (ALTCHA format) for a form with settings.challenge {provider: "pow"}; CORS-open, never cached',
    description:
      'Signed by the server and good once, for this form, until it expires (CHALLENGE_EXPIRES_S, default 600 s). Solve it with the altcha widget or altcha-lib solveChallenge and send the payload in the field `altcha` or the header X-Altcha.',
    request: { params: FormIdParam },
    responses: {
      200: json(PowChallengeBody, 'A new challenge'),
      ...errors('not_found'),
    },
  }),
  thanks: op('public', {
    method: 'get',
    path: '/s/{formId}/thanks',
    operationId: 'intake_thanks',
    tags: ['intake'],
    summary: 'The hosted thank-you page shown after an HTML form post without a redirect',
    request: { params: FormIdParam },
    responses: {
      200: { description: 'HTML', content: { 'text/html': { schema: z.string() } } },
      ...errors('not_found'),
    },
  }),
  render: op('public', {
    method: 'get',
    path: '/s/{formId}/render',
    operationId: 'intake_render',
    tags: ['intake'],
    summary:
      'Extension: a signed render time for a page showing the form, sent back as `_rendered` (a post sooner than ' +
      'settings.spam.min_seconds after it scores too_fast); no credentials, CORS-open, never cached',
    request: { params: FormIdParam },
    responses: { 200: json(RenderToken), ...errors('not_found') },
  }),
  renderPreflight: op('public', {
    method: 'options',
    path: '/s/{formId}/render',
    operationId: 'intake_render_preflight',
    tags: ['intake'],
    summary: 'CORS preflight of the render token: any origin may GET it',
    request: { params: FormIdParam },
    responses: { 204: { description: 'Preflight answer' } },
  }),
};
