import { Email, OrgRef } from './auth.js';
import {
  body,
  createdOrExisting,
  errors,
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
import { UserRef } from './members.js';
import { Role } from './organizations.js';
import { SESSION_ONLY } from './security.js';

/** How long an invitation can be accepted. */
export const INVITATION_TTL_DAYS = 7;

export const Invitation = z
  .object({
    id: z.string(),
    email: z.string(),
    role: Role,
    expires_at: Timestamp,
    invited_by: UserRef.nullable().meta({ description: 'null when created by an API key' }),
    created_at: Timestamp,
  })
  .meta({ id: 'Invitation' });

export const InvitationCreated = Invitation.extend({
  accept_url: z.string().meta({ description: 'public page of the invitation, also sent by mail' }),
  email_sent: z
    .boolean()
    .meta({ description: 'false when no mail went out (send failed, or an existing invitation was returned)' }),
  next: z.array(NextStep),
}).meta({ id: 'InvitationCreated' });

export const PublicInvitation = z
  .object({
    organization: z.object({ name: z.string() }),
    invited_by_name: z.string().nullable(),
    role: Role,
    expires_at: Timestamp,
    email_hint: z.string().meta({ description: 'the invited address, masked', example: 'a***@e***.com' }),
    next: z.array(NextStep).meta({ description: 'how to accept: sign in as the invited address, then accept' }),
  })
  .meta({ id: 'PublicInvitation' });

export const AcceptInvitationResult = z
  .object({ organization: OrgRef, role: Role, next: z.array(NextStep) })
  .meta({ id: 'AcceptInvitationResult' });

export const CreateInvitationBody = z
  .strictObject({
    email: Email,
    role: Role.optional().meta({ description: 'default "member"; "owner" only from an owner\'s session' }),
    if_exists: IfExists,
  })
  .meta({ id: 'CreateInvitationBody' });

const tags = ['invitations'];

export const invitationOps = {
  list: listPage('manage', listOf(Invitation, 'InvitationList'), {
    path: '/v1/invitations',
    operationId: 'invitations_list',
    tags,
    summary: 'Pending invitations of the active organization, newest first (owner or admin session, or a manage key)',
    query: ListQuery,
    also: ['forbidden'],
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/invitations',
    operationId: 'invitations_create',
    tags,
    summary:
      'Invite an address (mailed a link, valid 7 days); 409 when it is a member or already invited (if_exists: "return" answers the pending one)',
    request: { body: body(CreateInvitationBody) },
    responses: {
      ...createdOrExisting(
        InvitationCreated,
        'The pending invitation of that address (if_exists: "return"); no mail is sent',
      ),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'conflict', 'idempotency_conflict'),
    },
  }),
  get: op('public', {
    method: 'get',
    path: '/v1/invitations/{id}',
    operationId: 'invitations_get',
    tags,
    summary: 'What an invitation offers (no credentials): organization name, inviter, role, expiry, masked address',
    request: { params: IdParam },
    responses: { 200: json(PublicInvitation), ...errors('not_found', 'gone') },
  }),
  accept: op('submit', {
    method: 'post',
    path: '/v1/invitations/{id}/accept',
    operationId: 'invitations_accept',
    tags,
    summary: 'Join the organization: needs the session cookie of the invited address (not an API key)',
    security: SESSION_ONLY,
    request: { params: IdParam },
    responses: {
      200: json(AcceptInvitationResult),
      ...errors('unauthorized', 'forbidden', 'not_found', 'gone', 'idempotency_conflict'),
    },
  }),
  revoke: op('manage', {
    method: 'delete',
    path: '/v1/invitations/{id}',
    operationId: 'invitations_revoke',
    tags,
    summary: 'Revoke a pending invitation; its link stops working (owner or admin session, or a manage key)',
    request: { params: IdParam },
    responses: {
      204: { description: 'Revoked' },
      ...errors('unauthorized', 'forbidden', 'not_found', 'conflict'),
    },
  }),
};
