import { PLANS } from '../plans.js';
import { body, errors, IdParam, json, ListQuery, listOf, listPage, op, Timestamp, z } from './common.js';

/** Platform operator endpoints: callers whose user email is listed in ADMIN_EMAILS. */

const Instant = z.iso.datetime({ offset: true });
const Count = z.number().int().min(0);

export const PlanGrant = z
  .object({
    id: z.string(),
    plan: z.enum(PLANS),
    note: z.string(),
    expires_at: Timestamp.nullable().meta({ description: 'the code is redeemable until then; null = no deadline' }),
    plan_duration_days: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'the plan lasts this many days from redemption; null = no expiry' }),
    max_redemptions: z.number().int(),
    redeemed_count: z.number().int(),
    created_by_user_id: z.string().nullable(),
    created_at: Timestamp,
    revoked_at: Timestamp.nullable(),
  })
  .meta({ id: 'PlanGrant' });

export const PlanGrantCreated = PlanGrant.extend({
  code: z.string().meta({ description: 'the code to hand out; shown once, only its hash is kept' }),
}).meta({ id: 'PlanGrantCreated' });

export const CreatePlanGrantBody = z
  .strictObject({
    plan: z.enum(PLANS),
    note: z.string().max(500).optional().meta({ description: 'shown as plan_note of the organizations that redeem' }),
    expires_at: Instant.optional().meta({ description: 'the code is redeemable until then (must be in the future)' }),
    plan_duration_days: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .nullable()
      .optional()
      .meta({ description: 'plan_expires_at = redemption + N days; omitted or null = no expiry' }),
    max_redemptions: z.number().int().min(1).max(100_000).optional().meta({ description: 'default 1' }),
  })
  .meta({ id: 'CreatePlanGrantBody' });

const Window = z.object({ total: Count, created_7d: Count, created_30d: Count });

export const GrowthMetrics = z
  .object({
    generated_at: Timestamp,
    organizations: Window.extend({
      by_plan: z
        .object({ free: Count, pro: Count, team: Count, selfhost: Count })
        .meta({ description: 'by the plan in force (an expired plan counts as free)' }),
    }).meta({ description: 'the internal sandbox organization is left out' }),
    forms: Window.extend({
      active: Count.meta({ description: 'forms with a non-test submission in the last 30 days' }),
    }).meta({ description: 'sandbox forms are left out' }),
    submissions: z.object({
      total: Count,
      last_7d: Count,
      last_30d: Count,
      real_last_30d: Count,
      test_last_30d: Count,
      orgs_with_real_delivery_30d: Count.meta({
        description: 'organizations with a sent delivery of a non-test submission in the last 30 days',
      }),
    }),
    sandboxes: z
      .object({
        retained_created_30d: Count,
        retained_claimed_30d: Count,
        retained_expired_or_blocked_30d: Count,
      })
      .meta({ description: 'sandboxes created in the last 30 days that are still stored' }),
    destinations: z.object({
      by_type: z
        .object({ email: Count, telegram: Count, webhook: Count, slack: Count, discord: Count })
        .catchall(Count)
        .meta({ description: 'destinations per type; always lists email, telegram, webhook, slack, discord' }),
    }),
  })
  .meta({ id: 'GrowthMetrics' });

const tags = ['admin'];
const OPERATOR = ' (platform operators: ADMIN_EMAILS)';

export const adminOps = {
  createGrant: op('manage', {
    method: 'post',
    path: '/v1/admin/plan-grants',
    operationId: 'plan_grants_create',
    tags,
    summary: `Create a plan grant code, shown once; organizations redeem it with POST /v1/plan/redeem${OPERATOR}`,
    request: { body: body(CreatePlanGrantBody) },
    responses: {
      201: json(PlanGrantCreated, 'Created'),
      ...errors('bad_request', 'unauthorized', 'forbidden', 'validation_failed'),
    },
  }),
  listGrants: listPage('read', listOf(PlanGrant, 'PlanGrantList'), {
    path: '/v1/admin/plan-grants',
    operationId: 'plan_grants_list',
    tags,
    summary: `List plan grants, newest first (never their codes)${OPERATOR}`,
    query: ListQuery,
    also: ['forbidden'],
  }),
  revokeGrant: op('manage', {
    method: 'post',
    path: '/v1/admin/plan-grants/{id}/revoke',
    operationId: 'plan_grants_revoke',
    tags,
    summary: `Revoke a plan grant: its code stops working; plans already granted stay${OPERATOR}`,
    request: { params: IdParam },
    responses: { 200: json(PlanGrant), ...errors('unauthorized', 'forbidden', 'not_found') },
  }),
  growth: op('read', {
    method: 'get',
    path: '/v1/admin/growth',
    operationId: 'admin_growth_get',
    tags,
    summary: `Growth metrics: aggregate counts only, no personal data${OPERATOR}`,
    responses: { 200: json(GrowthMetrics), ...errors('unauthorized', 'forbidden') },
  }),
};
