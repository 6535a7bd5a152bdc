import { PLAN_SOURCES, PLANS } from '../plans.js';
import { body, errors, IdParam, json, ListQuery, listOf, listPage, NextStep, op, Timestamp, z } from './common.js';
import { SpamList } from './forms.js';
import { OrganizationSummary } from './me.js';
import { Slug } from './projects.js';
import { SESSION_ONLY } from './security.js';

/** True for a time zone name the runtime's IANA database knows ("UTC", "Europe/Berlin"); no raw offsets. */
export function isTimeZone(value: string): boolean {
  if (!value || /^[+-]/.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const TimeZone = z
  .string()
  .min(1)
  .max(100)
  .refine(isTimeZone, 'unknown time zone; use an IANA name such as "UTC" or "Europe/Berlin"')
  .meta({ description: 'IANA time zone name', example: 'Europe/Berlin' });

export const OrgName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}]*$/u, 'no control characters');

export const ROLES = ['owner', 'admin', 'member'] as const;
export const Role = z.enum(ROLES).meta({
  description:
    'owner: everything, including owners and roles; admin: members except owners, invitations, keys; member: read and manage resources',
});

/** settings.approve_destinations (extension): who may point data at a new target without a person's approval. */
export const APPROVE_DESTINATIONS = ['never', 'keys'] as const;

export const OrganizationSettings = z
  .strictObject({
    spam: z
      .strictObject({
        block: SpamList.optional().meta({ description: 'a match stores a submission to any form as spam' }),
        allow: SpamList.optional().meta({ description: 'a match is never spam (except by the honeypot)' }),
      })
      .nullable()
      .optional()
      .meta({ description: 'block/allow lists merged into every form’s settings.spam lists' }),
    approve_destinations: z
      .enum(APPROVE_DESTINATIONS)
      .nullable()
      .optional()
      .meta({
        description:
          'extension: "never" (default) or "keys": a destination created or re-pointed by an API key waits (approval ' +
          '"pending", its deliveries planned but not attempted) until an owner or admin approves it in the dashboard; ' +
          'only a session may turn it back to "never"',
      }),
  })
  .meta({ id: 'OrganizationSettings' });

/** OrganizationSummary plus OrganizationPlan, the time zone and whether it is a personal organization. */
export const Organization = OrganizationSummary.extend({
  personal: z.boolean().meta({ description: 'created with its user at sign-up; its first owner stays owner' }),
  plan: z.enum(PLANS),
  plan_source: z.enum(PLAN_SOURCES),
  plan_expires_at: Timestamp.nullable(),
  plan_note: z.string().nullable(),
  timezone: z.string(),
  settings: OrganizationSettings,
  created_at: Timestamp,
}).meta({ id: 'Organization' });

export const OrganizationCreated = Organization.extend({ next: z.array(NextStep) }).meta({
  id: 'OrganizationCreated',
});

export const CreateOrganizationBody = z
  .strictObject({
    name: OrgName,
    slug: Slug.optional().meta({ description: 'globally unique; default: derived from name' }),
    timezone: TimeZone.optional().meta({ description: 'IANA time zone; default "UTC"' }),
  })
  .meta({ id: 'CreateOrganizationBody' });

export const UpdateOrganizationBody = z
  .strictObject({
    name: OrgName.optional(),
    timezone: TimeZone.optional(),
    settings: OrganizationSettings.optional().meta({
      description: 'merged into the current settings key by key; a key set to null is removed',
    }),
  })
  .meta({ id: 'UpdateOrganizationBody' });

const tags = ['organizations'];

export const organizationOps = {
  list: listPage('read', listOf(Organization, 'OrganizationList'), {
    path: '/v1/organizations',
    operationId: 'organizations_list',
    tags,
    summary:
      "Organizations the caller can act in: a session's memberships (role, is_active), or a key's one organization (role null)",
    query: ListQuery,
    also: ['forbidden'],
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/organizations',
    operationId: 'organizations_create',
    tags,
    summary:
      "Create a team organization owned by the caller's user (a session's, or the user who minted the key); it does not become active",
    request: { body: body(CreateOrganizationBody) },
    responses: {
      201: json(OrganizationCreated, 'Created'),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'conflict', 'idempotency_conflict'),
    },
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/organizations/{id}',
    operationId: 'organizations_update',
    tags,
    summary:
      'Rename an organization or set its time zone (owner or admin session, or a manage key of it); the slug stays',
    request: { params: IdParam, body: body(UpdateOrganizationBody) },
    responses: {
      200: json(Organization),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed'),
    },
  }),
  switch: op('submit', {
    method: 'post',
    path: '/v1/organizations/{id}/switch',
    operationId: 'organizations_switch',
    tags,
    summary:
      "Make another organization the session's active one (session of a member only; an API key belongs to one organization)",
    security: SESSION_ONLY,
    // Its effect is on the caller's own session: a repeat switches again rather than answering the first.
    'x-never-replayed': true,
    request: { params: IdParam },
    responses: {
      200: json(Organization),
      ...errors('unauthorized', 'forbidden', 'not_found'),
    },
  }),
};
