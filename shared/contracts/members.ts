import { body, errors, IdParam, json, ListQuery, listOf, listPage, op, Timestamp, z } from './common.js';
import { Role } from './organizations.js';
import { SESSION_ONLY } from './security.js';

export const UserRef = z.object({ id: z.string(), name: z.string(), email: z.string() }).meta({ id: 'UserRef' });

export const Member = z
  .object({
    id: z.string().meta({ description: 'membership id (mem_…)' }),
    user: UserRef,
    role: Role,
    joined_at: Timestamp,
  })
  .meta({ id: 'Member' });

export const UpdateMemberBody = z.strictObject({ role: Role }).meta({ id: 'UpdateMemberBody' });

const tags = ['members'];

export const memberOps = {
  list: listPage('manage', listOf(Member, 'MemberList'), {
    path: '/v1/members',
    operationId: 'members_list',
    tags,
    summary: "The active organization's members, newest first (any member's session, or a manage key)",
    query: ListQuery,
    also: ['forbidden'],
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/members/{id}',
    operationId: 'members_update',
    tags,
    // A role change or removal needs a person to answer for it: the service refuses an API key (403).
    security: SESSION_ONLY,
    summary:
      "Change a member's role (session of an owner, or of an admin for non-owners); the organization always keeps an owner",
    request: { params: IdParam, body: body(UpdateMemberBody) },
    responses: {
      200: json(Member),
      ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed', 'conflict'),
    },
  }),
  remove: op('manage', {
    method: 'delete',
    path: '/v1/members/{id}',
    operationId: 'members_remove',
    tags,
    // A role change or removal needs a person to answer for it: the service refuses an API key (403).
    security: SESSION_ONLY,
    summary:
      'Remove a member (session of an owner, or of an admin for non-owners; anyone may remove themselves); never the last owner',
    request: { params: IdParam },
    responses: {
      204: { description: 'Removed' },
      ...errors('unauthorized', 'forbidden', 'not_found', 'conflict'),
    },
  }),
};
