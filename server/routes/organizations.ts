import type { OpenAPIHono } from '@hono/zod-openapi';
import { invitationOps } from '../../shared/contracts/invitations.js';
import { memberOps } from '../../shared/contracts/members.js';
import { organizationOps } from '../../shared/contracts/organizations.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import {
  acceptInvitation,
  createInvitation,
  getPublicInvitation,
  listInvitations,
  revokeInvitation,
} from '../services/invitations.js';
import { listMembers, removeMember, updateMember } from '../services/members.js';
import {
  createOrganization,
  listOrganizations,
  switchOrganization,
  updateOrganization,
} from '../services/organizations.js';
import { mountRemove } from './glue.js';

/** Organizations, members and invitations: who works in which organization, with which role. */
export function registerOrganizations(app: OpenAPIHono<AppEnv>) {
  mount(app, organizationOps.list, async (c) =>
    send(c, await listOrganizations(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'organization'))),
  );
  mount(app, organizationOps.create, async (c) =>
    send(c, await createOrganization(c.get('deps'), c.get('actor'), c.req.valid('json')), 201),
  );
  mount(app, organizationOps.update, async (c) =>
    send(c, await updateOrganization(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mount(app, organizationOps.switch, async (c) =>
    send(c, await switchOrganization(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );

  mount(app, memberOps.list, async (c) =>
    send(c, await listMembers(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'membership'))),
  );
  mount(app, memberOps.update, async (c) =>
    send(c, await updateMember(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, memberOps.remove, removeMember);

  mount(app, invitationOps.list, async (c) =>
    send(c, await listInvitations(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'invitation'))),
  );
  mount(app, invitationOps.create, async (c) => {
    const r = await createInvitation(c.get('deps'), c.get('actor'), c.req.valid('json'));
    return send(c, r.invitation, r.created ? 201 : 200);
  });
  mount(app, invitationOps.get, async (c) =>
    send(c, await getPublicInvitation(c.get('deps'), c.req.valid('param').id)),
  );
  mount(app, invitationOps.accept, async (c) =>
    send(c, await acceptInvitation(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mountRemove(app, invitationOps.revoke, revokeInvitation);
}
