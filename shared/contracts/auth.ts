import { ERROR_CODES } from '../errors.js';
import { body, errors, json, op, Timestamp, z } from './common.js';
import { SESSION_IF_ANY } from './security.js';

export const KEY_SCOPES = ['manage', 'read', 'submit'] as const;
export const KeyScope = z.enum(KEY_SCOPES);

export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email().max(254))
  .meta({ description: 'email address (trimmed and lowercased)', example: 'you@example.com' });

export const ProvidersResponse = z
  .object({
    email_password: z.object({ sign_in: z.boolean(), sign_up: z.boolean() }),
    email_code: z.object({ sign_in: z.boolean(), sign_up: z.boolean() }),
    social: z.array(z.enum(['google', 'github'])),
    sign_in_url: z.string(),
  })
  .meta({ id: 'AuthProviders' });

export const RequestCodeBody = z.strictObject({ email: Email }).meta({ id: 'RequestCodeBody' });
export const RequestCodeResponse = z
  .object({ ok: z.literal(true), expires_in: z.number().int(), next: z.string() })
  .meta({ id: 'RequestCodeResult' });

export const KeyName = z.string().min(1).max(32);

export const VerifyCodeBody = z
  .strictObject({
    email: Email,
    code: z.string().regex(/^\d{6}$/, 'a 6-digit code'),
    key_name: KeyName.optional().meta({ description: '1..32 characters; default agent-YYYY-MM-DD' }),
    scopes: z.array(KeyScope).min(1).optional().meta({ description: 'at least one; default ["manage"]' }),
  })
  .meta({ id: 'VerifyCodeBody' });

export const OrgRef = z.object({ id: z.string(), slug: z.string(), name: z.string() });

export const VerifyCodeResponse = z
  .object({
    api_key: z.string(),
    key_id: z.string(),
    scopes: z.array(KeyScope),
    organization: OrgRef,
    user: z.object({ email: z.string(), created: z.boolean() }),
    next: z.array(z.string()),
  })
  .meta({ id: 'VerifyCodeResult' });

export const SignInBody = z
  .strictObject({ email: Email, code: z.string().regex(/^\d{6}$/) })
  .meta({ id: 'SignInBody' });
export const SessionResponse = z
  .object({
    user: z.object({ id: z.string(), email: z.string(), name: z.string(), created: z.boolean() }),
    organization: OrgRef,
    expires_at: Timestamp,
    next: z.array(z.string()),
  })
  .meta({ id: 'Session' });

const tags = ['auth'];

export const authOps = {
  providers: op('public', {
    method: 'get',
    path: '/v1/auth/providers',
    operationId: 'auth_providers',
    tags,
    summary: 'Sign-in methods this server offers',
    responses: { 200: json(ProvidersResponse) },
  }),
  requestCode: op('public', {
    method: 'post',
    path: '/v1/auth/request-code',
    operationId: 'auth_request_code',
    tags,
    summary: 'Email a 6-digit code (valid 10 minutes); answers 200 for every well-formed address',
    request: { body: body(RequestCodeBody) },
    responses: {
      200: json(RequestCodeResponse),
      ...errors('bad_request', 'validation_failed', 'rate_limited', 'not_implemented', 'bad_gateway'),
    },
  }),
  verifyCode: op('public', {
    method: 'post',
    path: '/v1/auth/verify-code',
    operationId: 'auth_verify_code',
    tags,
    summary: 'Exchange an email code for an API key (shown once); no cookie is set',
    request: { body: body(VerifyCodeBody) },
    responses: {
      201: json(VerifyCodeResponse, 'Created'),
      ...errors('bad_request', 'unauthorized', 'validation_failed', 'rate_limited'),
    },
  }),
  signIn: op('public', {
    method: 'post',
    path: '/v1/auth/sign-in',
    operationId: 'auth_sign_in',
    tags,
    summary: 'Exchange an email code for a dashboard session cookie (needed for POST /v1/api-keys)',
    request: { body: body(SignInBody) },
    responses: {
      200: json(SessionResponse),
      ...errors('bad_request', 'unauthorized', 'validation_failed', 'rate_limited'),
    },
  }),
  signOut: op('public', {
    method: 'post',
    path: '/v1/auth/sign-out',
    operationId: 'auth_sign_out',
    tags,
    summary: 'End the dashboard session of the cookie sent (runs every time: no Idempotency-Key answer is kept)',
    security: SESSION_IF_ANY,
    'x-never-replayed': true,
    responses: { 204: { description: 'Signed out' } },
  }),
};

export const CODE_TTL_SECONDS = 600;
export const CODE_MAX_TRIES = 5;
export { ERROR_CODES };
