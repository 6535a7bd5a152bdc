import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { getPublicInvitation } from '../../../services/invitations.js';
import type { DashEnv } from '../../env.js';
import { PostForm, Time } from '../../render.js';

/** The accept page of an invitation: what it is for; signed in, an Accept button, else a way to sign in. */
export const InvitationAccept: FC<{
  c: Context<DashEnv>;
  inv: Awaited<ReturnType<typeof getPublicInvitation>>;
  signedIn: boolean;
  here: string;
}> = ({ c, inv, signedIn, here }) => (
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
    {signedIn ? (
      <>
        <p>
          You are signed in as <strong>{c.var.email ?? 'this account'}</strong>. Accepting adds you to the organization
          and opens it.
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
  </>
);
