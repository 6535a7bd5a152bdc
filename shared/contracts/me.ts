import { PLAN_SOURCES, PLANS } from '../plans.js';
import { KeyScope } from './auth.js';
import { errors, json, NextStep, op, Timestamp, z } from './common.js';

const Limit = z.number().int().nullable().meta({ description: 'null = unlimited' });

export const OrganizationSummary = z
  .object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    role: z.enum(['owner', 'admin', 'member']).nullable(),
    is_active: z.boolean(),
  })
  .meta({ id: 'OrganizationSummary' });

export const Me = z
  .object({
    organization: z.object({
      id: z.string(),
      slug: z.string(),
      name: z.string(),
      plan: z.enum(PLANS),
      plan_source: z.enum(PLAN_SOURCES),
      plan_expires_at: Timestamp.nullable(),
      plan_note: z.string().nullable(),
      timezone: z.string(),
    }),
    key: z.object({ prefix: z.string().optional(), scopes: z.array(KeyScope) }),
    organizations: z.array(OrganizationSummary),
    counts: z.object({
      projects: z.number().int(),
      forms: z.number().int(),
      streams: z.number().int(),
      destinations: z.number().int(),
      routes: z.number().int(),
    }),
    limits: z.object({
      forms: Limit,
      submissions_per_month: Limit,
      destinations: Limit,
      retention_days: Limit,
      attachment_max_bytes: z.number().int(),
      attachments_per_submission: z.number().int(),
      attachment_storage_bytes: Limit,
      used: z.object({
        forms: z.number().int(),
        submissions_this_month: z.number().int(),
        attachment_storage_bytes: z.number().int(),
      }),
    }),
    next: z.array(NextStep),
  })
  .meta({ id: 'Me' });

export const meOps = {
  get: op('submit', {
    method: 'get',
    path: '/v1/me',
    operationId: 'me_get',
    tags: ['me'],
    summary: 'Who am I: organization, plan, key scopes, counts, limits and usage, next steps',
    responses: { 200: json(Me), ...errors('unauthorized') },
  }),
};
