import type { Context, Hono } from 'hono';
import { invitationOps } from '../../../shared/contracts/invitations.js';
import { meOps } from '../../../shared/contracts/me.js';
import { memberOps } from '../../../shared/contracts/members.js';
import { organizationOps, ROLES } from '../../../shared/contracts/organizations.js';
import type { Actor } from '../../http/context.js';
import { ApiError } from '../../http/errors.js';
import { pageOf } from '../../http/pagination.js';
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
import { Badge, CsrfField, done, ErrorBox, PostForm, page, Time } from '../render.js';
import { fieldsOf, formHint, issueAt, one } from './org-common.js';
import { registerKeyPages } from './team-keys.js';

type InviteValues = { email: string; role: string };

/** "12 / 100", "12 (no limit)", with bytes made readable. */
function usage(used: number, limit: number | null, bytes = false): string {
  const f = (n: number) => (bytes ? readableBytes(n) : n.toLocaleString('en'));
  return limit === null ? `${f(used)} (no limit)` : `${f(used)} of ${f(limit)}`;
}
export function readableBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

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
  // Anyone may leave (the API's rule); owners and admins do it from their own row.
  const own = members.data.find((m) => m.user.id === actor.userId);
  const issues = issuesOf(invite.error);
  const emailError = issueAt(issues, 'email');
  const roleError = issueAt(issues, 'role');
  const { limits, organization: org } = account;
  return page(
    c,
    { title: 'Team', section: 'team', status: invite.error ? (invite.error.status === 409 ? 409 : 422) : 200 },
    <>
      <h1>Team of {org.name}</h1>
      <p class="muted">
        You are {actor.role ?? 'a member'} here. <a href="/app/keys">API keys</a> for CI and agents are on their own
        page.
      </p>

      <section class="card" aria-labelledby="members-h">
        <h2 id="members-h">Members</h2>
        <Table cols={['Person', 'Role', 'Joined', manager && 'Change']}>
          {members.data.map((m) => {
            const self = m.user.id === actor.userId;
            return (
              <tr>
                <td>
                  {m.user.name ? <span>{m.user.name} </span> : null}
                  <span class="muted">{m.user.email}</span>
                  {self ? <span> (you)</span> : null}
                </td>
                <td>
                  <Badge value={m.role} /> <span>{m.role}</span>
                </td>
                <td>
                  <Time at={m.joined_at} />
                </td>
                {manager ? (
                  <td>
                    <div class="row">
                      <PostForm c={c} action={`/app/team/members/${encodeURIComponent(m.id)}/role`} class="row">
                        <select name="role" aria-label={`Role of ${m.user.email}`}>
                          {ROLES.map((r) => (
                            <option value={r} selected={r === m.role}>
                              {r}
                            </option>
                          ))}
                        </select>
                        <button type="submit" class="secondary">
                          Change role
                        </button>
                      </PostForm>
                      <PostForm
                        c={c}
                        action={`/app/team/members/${encodeURIComponent(m.id)}/remove`}
                        confirm={
                          self
                            ? 'Leave this organization?'
                            : `Remove ${m.user.email} from this organization? Their API keys stay.`
                        }
                      >
                        <button type="submit" class="danger">
                          {self ? 'Leave' : 'Remove'}
                        </button>
                      </PostForm>
                    </div>
                  </td>
                ) : null}
              </tr>
            );
          })}
        </Table>
        {!manager ? (
          <p class="muted">Only an owner or admin can change roles, remove members or invite people.</p>
        ) : null}
        {!manager && own ? (
          <PostForm
            c={c}
            action={`/app/team/members/${encodeURIComponent(own.id)}/remove`}
            confirm="Leave this organization? You lose access to its forms and submissions."
          >
            <button type="submit" class="secondary">
              Leave this organization
            </button>
          </PostForm>
        ) : null}
      </section>

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

      <section class="card" aria-labelledby="plan-h">
        <h2 id="plan-h">Plan and usage</h2>
        <dl class="meta">
          <dt>Plan</dt>
          <dd>
            <strong>{org.plan}</strong> <span class="muted">({org.plan_source})</span>
            {org.plan_expires_at ? (
              <span>
                {' '}
                until <Time at={org.plan_expires_at} />
              </span>
            ) : null}
            {org.plan_note ? <span> — {org.plan_note}</span> : null}
          </dd>
          <dt>Forms</dt>
          <dd>{usage(limits.used.forms, limits.forms)}</dd>
          <dt>Submissions this month</dt>
          <dd>{usage(limits.used.submissions_this_month, limits.submissions_per_month)}</dd>
          <dt>Destinations</dt>
          <dd>{usage(account.counts.destinations, limits.destinations)}</dd>
          <dt>Attachment storage</dt>
          <dd>{usage(limits.used.attachment_storage_bytes, limits.attachment_storage_bytes, true)}</dd>
          <dt>Retention</dt>
          <dd>{limits.retention_days === null ? 'kept until deleted' : `${limits.retention_days} days`}</dd>
          <dt>Attachments</dt>
          <dd>
            up to {limits.attachments_per_submission} per submission, {readableBytes(limits.attachment_max_bytes)} each
          </dd>
        </dl>
      </section>
    </>,
  );
}

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
      <>
        <h1>Join {inv.organization.name}</h1>
        <p>
          {inv.invited_by_name ? `${inv.invited_by_name} invites you` : 'You are invited'} to join{' '}
          <strong>{inv.organization.name}</strong> as <strong>{inv.role}</strong>.
        </p>
        <dl class="meta">
          <dt>For the address</dt>
          <dd>
            <code>{inv.email_hint}</code>
          </dd>
          <dt>Expires</dt>
          <dd>
            <Time at={inv.expires_at} />
          </dd>
        </dl>
        {actor ? (
          <>
            <p>
              You are signed in as <strong>{c.var.email ?? 'this account'}</strong>. Accepting adds you to the
              organization and opens it.
            </p>
            <PostForm c={c} action={`${here}/accept`}>
              <button type="submit">Accept the invitation</button>
            </PostForm>
          </>
        ) : (
          <>
            <p>Sign in with the invited address to accept; you come back here afterwards.</p>
            <p>
              <a class="button" href={`/app/sign-in?next=${encodeURIComponent(here)}`}>
                Sign in to accept
              </a>
            </p>
          </>
        )}
      </>,
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
