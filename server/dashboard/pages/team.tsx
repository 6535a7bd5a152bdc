import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { invitationOps } from '../../../shared/contracts/invitations.js';
import { meOps } from '../../../shared/contracts/me.js';
import { memberOps } from '../../../shared/contracts/members.js';
import { organizationOps, ROLES } from '../../../shared/contracts/organizations.js';
import type { Actor } from '../../core/deps.js';
import { ApiError } from '../../core/errors.js';
import { pageOf } from '../../core/pagination.js';
import {
  acceptInvitation,
  createInvitation,
  getPublicInvitation,
  listInvitations,
  revokeInvitation,
} from '../../services/invitations.js';
import { me } from '../../services/me.js';
import { listMembers, removeMember, updateMember } from '../../services/members.js';
import { switchOrganization } from '../../services/organizations.js';
import { FieldMessage, Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, issuesOf } from '../input.js';
import { CsrfField, done, ErrorBox, PostForm, page, Time } from '../render.js';
import { fieldsOf, formHint, issueAt, one } from './org-common.js';
import { InvitationAccept } from './team/invitation.js';
import { MembersCard } from './team/members.js';
import { PlanCard } from './team/plan.js';
import { registerKeyPages } from './team-keys.js';

type InviteValues = { email: string; role: string };

/** A list the service refuses to this role (invitations for a member) becomes a sentence, not an error page. */
async function unlessForbidden<T>(run: () => Promise<T>): Promise<T | ApiError> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'forbidden') return err;
    throw err;
  }
}

async function teamPage(
  c: Context<DashEnv>,
  invite: { values: InviteValues; error?: ApiError } = { values: { email: '', role: 'member' } },
) {
  const { deps, actor } = c.var;
  allow(c, memberOps.list);
  allow(c, meOps.get);
  const [members, invitations, account] = await Promise.all([
    listMembers(deps, actor, pageOf({ limit: 200 }, 'membership')),
    unlessForbidden(() => {
      allow(c, invitationOps.list);
      return listInvitations(deps, actor, pageOf({ limit: 200 }, 'invitation'));
    }),
    me(deps, actor),
  ]);
  const manager = actor.role === 'owner' || actor.role === 'admin';
  return page(
    c,
    { title: 'Team', section: 'team', status: invite.error ? (invite.error.status === 409 ? 409 : 422) : 200 },
    <>
      <h1>Team of {account.organization.name}</h1>
      <p class="muted">
        You are {actor.role ?? 'a member'} here. <a href="/app/keys">API keys</a> for CI and agents are on their own
        page.
      </p>

      <MembersCard c={c} members={members.data} me={actor.userId} manager={manager} />

      <InvitationsCard c={c} invitations={invitations} manager={manager} invite={invite} />

      <PlanCard account={account} />
    </>,
  );
}

/** The pending invitations (Revoke on each), then the invite form for a manager. */
const InvitationsCard: FC<{
  c: Context<DashEnv>;
  invitations: Awaited<ReturnType<typeof listInvitations>> | ApiError;
  manager: boolean;
  invite: { values: InviteValues; error?: ApiError };
}> = ({ c, invitations, manager, invite }) => {
  const actor = c.var.actor;
  const issues = issuesOf(invite.error);
  const emailError = issueAt(issues, 'email');
  const roleError = issueAt(issues, 'role');
  return (
    <section class="card" aria-labelledby="inv-h">
      <h2 id="inv-h">Invitations</h2>
      {invitations instanceof ApiError ? (
        <p class="muted">{invitations.message}</p>
      ) : invitations.data.length === 0 ? (
        <p>No pending invitation. Invite someone below: they get a mail with a link to accept.</p>
      ) : (
        <Table cols={['Address', 'Role', 'Invited by', 'Expires', 'Revoke']}>
          {invitations.data.map((i) => (
            <tr>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>{i.invited_by?.email ?? 'an API key'}</td>
              <td>
                <Time at={i.expires_at} />
              </td>
              <td>
                <PostForm
                  c={c}
                  action={`/app/team/invitations/${encodeURIComponent(i.id)}/revoke`}
                  confirm={`Revoke the invitation of ${i.email}? Its link stops working.`}
                >
                  <button type="submit" class="secondary" aria-label={`Revoke the invitation of ${i.email}`}>
                    Revoke
                  </button>
                </PostForm>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {manager ? (
        <form method="post" action="/app/team/invitations" aria-labelledby="invite-h">
          <h3 id="invite-h">Invite someone</h3>
          <CsrfField c={c} />
          {invite.error ? <ErrorBox message={invite.error.message} hint={formHint(invite.error)} /> : null}
          <div class="row">
            <div>
              <label for="inv-email">Email address</label>
              <input
                id="inv-email"
                name="email"
                type="email"
                required
                value={invite.values.email}
                aria-invalid={emailError ? 'true' : undefined}
              />
              <FieldMessage message={emailError} />
            </div>
            <div>
              <label for="inv-role">Role</label>
              <select id="inv-role" name="role">
                {ROLES.filter((r) => r !== 'owner' || actor.role === 'owner').map((r) => (
                  <option value={r} selected={r === invite.values.role}>
                    {r}
                  </option>
                ))}
              </select>
              <FieldMessage message={roleError} />
            </div>
            <button type="submit">Send invitation</button>
          </div>
        </form>
      ) : null}
    </section>
  );
};

export function registerTeamPages(dash: Hono<DashEnv>): void {
  dash.get('/team', (c) => teamPage(c));

  dash.post('/team/members/:id/role', async (c) => {
    allow(c, memberOps.update);
    const f = await fieldsOf(c);
    const m = await updateMember(
      c.var.deps,
      c.var.actor,
      c.req.param('id'),
      bodyFor(memberOps.update, { role: one(f, 'role') }),
    );
    return done(c, '/app/team', `${m.user.email} is now ${m.role}.`);
  });

  dash.post('/team/members/:id/remove', async (c) => {
    allow(c, memberOps.remove);
    const { deps, actor } = c.var;
    const id = c.req.param('id');
    const members = await listMembers(deps, actor, pageOf({ limit: 200 }, 'membership'));
    const leaving = members.data.find((m) => m.id === id)?.user.id === actor.userId;
    await removeMember(deps, actor, id);
    // Leaving moves this session to another organization of yours; the team page is then that one's.
    return done(c, leaving ? '/app' : '/app/team', leaving ? 'You left the organization.' : 'Member removed.');
  });

  dash.post('/team/invitations', async (c) => {
    allow(c, invitationOps.create);
    const f = await fieldsOf(c);
    const values = { email: one(f, 'email').trim(), role: one(f, 'role') || 'member' };
    try {
      const body = bodyFor(invitationOps.create, values);
      const r = await createInvitation(c.var.deps, c.var.actor, body);
      return done(
        c,
        '/app/team',
        r.invitation.email_sent
          ? `Invitation sent to ${r.invitation.email}.`
          : `Invitation made for ${r.invitation.email}, but the mail did not go out: share ${dashboardLink(c, r.invitation.id)} with them.`,
      );
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'validation_failed' || err.code === 'conflict')) {
        return teamPage(c, { values, error: err });
      }
      throw err;
    }
  });

  dash.post('/team/invitations/:id/revoke', async (c) => {
    allow(c, invitationOps.revoke);
    await revokeInvitation(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/team', 'Invitation revoked.');
  });

  // The accept page (public path): what the invitation is for; signed in, an Accept button.
  dash.get('/invitations/:id', async (c) => {
    const id = c.req.param('id');
    const inv = await getPublicInvitation(c.var.deps, id);
    const actor = c.get('actor') as Actor | undefined;
    const here = `/app/invitations/${encodeURIComponent(id)}`;
    return page(
      c,
      { title: `Invitation to ${inv.organization.name}` },
      <InvitationAccept c={c} inv={inv} signedIn={!!actor} here={here} />,
    );
  });

  dash.post('/invitations/:id/accept', async (c) => {
    const id = c.req.param('id');
    const actor = c.get('actor') as Actor | undefined;
    if (!actor) return c.redirect(`/app/sign-in?next=${encodeURIComponent(`/app/invitations/${id}`)}`, 303);
    allow(c, invitationOps.accept);
    const r = await acceptInvitation(c.var.deps, actor, id);
    allow(c, organizationOps.switch);
    await switchOrganization(c.var.deps, actor, r.organization.id);
    return done(c, '/app', `You joined ${r.organization.name} as ${r.role}.`);
  });

  registerKeyPages(dash);
}

/** The dashboard's accept page for an invitation, as an absolute link. */
export const dashboardLink = (c: Context<DashEnv>, id: string) =>
  `${c.var.deps.config.publicBaseUrl}/app/invitations/${encodeURIComponent(id)}`;
