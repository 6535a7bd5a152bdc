import { isPlainOrigin, ORIGIN_RULE } from '../origins.js';
import { errors, json, NextStep, op, Timestamp, z } from './common.js';
import { Embed, Form, Verify } from './forms.js';
import { SANDBOX_CLAIM, SANDBOX_TOKEN } from './security.js';

export const SANDBOX_STATUSES = ['active', 'claimed', 'expired', 'blocked'] as const;

const Claim = z
  .object({
    deadline: Timestamp.meta({ description: 'claim before this time; the sandbox and its form are deleted after it' }),
    how: z.string(),
    cli: z.string(),
    api: z.object({
      method: z.literal('POST'),
      path: z.string(),
      headers: z.record(z.string(), z.string()),
    }),
  })
  .meta({ id: 'SandboxClaimHow' });

export const Sandbox = z
  .object({
    id: z.string().meta({ description: 'sbx_ id' }),
    name: z.string(),
    status: z.enum(SANDBOX_STATUSES),
    submit_url: z.string(),
    expires_at: Timestamp,
    accepted_count: z.number().int().meta({ description: 'test submissions stored' }),
    remaining: z.number().int().meta({ description: 'submissions it still accepts (at most 5 in all)' }),
    claim_url: z.string().meta({ description: 'a page explaining how to claim it' }),
    claim: Claim,
  })
  .meta({ id: 'Sandbox' });

export const SandboxRead = Sandbox.extend({
  submissions: z.array(
    z.object({
      id: z.string(),
      data: z.record(z.string(), z.unknown()),
      meta: z.record(z.string(), z.unknown()),
      received_at: Timestamp,
    }),
  ),
}).meta({ id: 'SandboxRead' });

export const SandboxCreated = z
  .object({
    sandbox: Sandbox,
    sandbox_token: z.string().meta({ description: 'shown here only; send it as `Authorization: Sandbox <token>`' }),
    authorization: z.object({ scheme: z.literal('Sandbox'), example: z.string() }),
    embed: Embed,
    verify: Verify,
    claim_url: z.string(),
    next: z.array(NextStep),
  })
  .meta({ id: 'SandboxCreated' });

export const CreateSandboxBody = z
  .strictObject({
    name: z.string().min(1).max(100),
    origin: z
      .url()
      .max(300)
      .refine(isPlainOrigin, { message: `must be ${ORIGIN_RULE}` })
      .optional()
      .meta({ description: 'the site that will post; stored as its origin' }),
    claim_email: z.email().max(254).optional().meta({ description: 'only this person may claim the sandbox' }),
  })
  .meta({ id: 'CreateSandboxBody' });

export const SandboxClaimed = z
  .object({ sandbox: Sandbox, form: Form, next: z.array(NextStep) })
  .meta({ id: 'SandboxClaimed' });

const IdempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .optional()
    .meta({ description: 'required: a canonical lowercase UUIDv4; the same key and body answer the same sandbox' }),
});
const SandboxAuthHeader = z.object({
  authorization: z.string().optional().meta({ description: '`Sandbox <sandbox_token>`' }),
});
const ClaimHeader = z.object({
  'service-sandbox-token': z.string().optional().meta({ description: 'the sandbox_token (required)' }),
});
const IdParam = z.object({ id: z.string().meta({ param: { name: 'id', in: 'path' } }) });

const tags = ['sandboxes'];

export const sandboxOps = {
  create: op('public', {
    method: 'post',
    path: '/v1/public/sandboxes',
    operationId: 'sandboxes_create',
    tags,
    summary:
      'Create an anonymous sandbox: an inert form that takes 5 test submissions for 24 hours, no files, no ' +
      'deliveries. Needs an Idempotency-Key (lowercase UUIDv4); claim it into an organization to keep it',
    request: {
      headers: IdempotencyHeader,
      body: { required: true, content: { 'application/json': { schema: CreateSandboxBody } } },
    },
    responses: {
      201: json(SandboxCreated, 'Created (or the same sandbox again for a replayed Idempotency-Key)'),
      ...errors('validation_failed', 'idempotency_conflict', 'rate_limited', 'service_unavailable'),
    },
  }),
  read: op('public', {
    method: 'get',
    path: '/v1/public/sandboxes/{id}',
    operationId: 'sandboxes_read',
    tags,
    summary: 'Read a sandbox and its submissions with `Authorization: Sandbox <sandbox_token>`',
    security: SANDBOX_TOKEN,
    request: { params: IdParam, headers: SandboxAuthHeader },
    responses: { 200: json(SandboxRead), ...errors('unauthorized', 'gone') },
  }),
  claim: op('manage', {
    method: 'post',
    path: '/v1/sandboxes/{id}/claim',
    operationId: 'sandboxes_claim',
    tags,
    summary:
      'Claim a sandbox into the caller’s organization (manage key + Service-Sandbox-Token): its form keeps its id ' +
      'and submit URL; the copied test submissions stay inert',
    security: SANDBOX_CLAIM,
    request: { params: IdParam, headers: ClaimHeader },
    responses: {
      200: json(SandboxClaimed, 'Claimed'),
      ...errors('bad_request', 'unauthorized', 'forbidden', 'not_found', 'gone', 'plan_limit_reached'),
    },
  }),
  claimPage: op('public', {
    method: 'get',
    path: '/claim/{id}',
    operationId: 'sandboxes_claim_page',
    tags,
    summary: 'The plain page behind claim_url: how to claim a sandbox with the CLI or the API',
    request: { params: IdParam },
    responses: { 200: { description: 'HTML', content: { 'text/html': { schema: z.string() } } } },
  }),
};
