import { PLAN_SOURCES, PLANS } from '../plans.js';
import { body, errors, json, NextStep, op, Timestamp, z } from './common.js';

const Instant = z.iso.datetime({ offset: true });

export const OrganizationPlan = z
  .object({
    plan: z.enum(PLANS).meta({ description: 'the plan in force: an expired plan answers free' }),
    plan_source: z.enum(PLAN_SOURCES).meta({ description: 'free once plan_expires_at has passed' }),
    plan_expires_at: Timestamp.nullable(),
    plan_note: z.string().nullable(),
  })
  .meta({ id: 'OrganizationPlan' });

export const RedeemPlanBody = z
  .strictObject({ code: z.string().trim().min(1).max(100).meta({ example: 'pg_abcdefghijklmnopqrstuvwxyz234567' }) })
  .meta({ id: 'RedeemPlanBody' });

export const RedeemPlanResult = OrganizationPlan.extend({ next: z.array(NextStep) }).meta({ id: 'RedeemPlanResult' });

/** Standard Webhooks headers; checked before the body is parsed (a missing one is 400). */
export const BillingWebhookHeaders = z.object({
  'webhook-id': z.string().meta({ description: 'unique message id; a repeat is answered 202 and ignored' }),
  'webhook-timestamp': z.string().meta({ description: 'unix seconds; more than 5 minutes off is refused' }),
  'webhook-signature': z.string().meta({
    description:
      'space-separated "v1,<base64 HMAC-SHA256 of <webhook-id>.<webhook-timestamp>.<raw body>>" with the key of BILLING_WEBHOOK_SECRET',
  }),
});

export const BillingWebhookBody = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('plan.updated'),
      data: z.object({
        organization_id: z.string().min(1),
        plan: z.enum(PLANS),
        expires_at: Instant.nullable().optional().meta({ description: 'the paid period end; null = no expiry' }),
        note: z.string().max(500).nullable().optional(),
      }),
    }),
    z.object({
      type: z.literal('plan.canceled'),
      data: z.object({ organization_id: z.string().min(1) }),
    }),
  ])
  .meta({
    id: 'BillingWebhookBody',
    description: 'plan.updated sets the plan (plan_source billing); plan.canceled returns the organization to free',
  });

export const BillingWebhookResult = z
  .object({
    ok: z.literal(true),
    duplicate: z.boolean().meta({ description: 'true when this webhook-id was processed before (nothing changed)' }),
  })
  .meta({ id: 'BillingWebhookResult' });

export const billingOps = {
  redeem: op('manage', {
    method: 'post',
    path: '/v1/plan/redeem',
    operationId: 'plan_redeem',
    tags: ['billing'],
    summary: "Redeem a plan grant code for the caller's organization (plan_source complimentary)",
    request: { body: body(RedeemPlanBody) },
    responses: {
      200: json(RedeemPlanResult),
      ...errors('bad_request', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'gone', 'validation_failed'),
    },
  }),
  webhook: op('public', {
    method: 'post',
    path: '/v1/billing/webhook',
    operationId: 'billing_webhook',
    tags: ['billing'],
    summary:
      'Billing provider callback, signed with Standard Webhooks (no credentials); 404 while BILLING_WEBHOOK_SECRET is unset',
    request: { headers: BillingWebhookHeaders, body: body(BillingWebhookBody) },
    responses: {
      202: json(BillingWebhookResult, 'Accepted (or a replay, ignored)'),
      ...errors('bad_request', 'unauthorized', 'not_found', 'validation_failed'),
    },
  }),
};
