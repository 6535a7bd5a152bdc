import type { Context, Hono } from 'hono';
import type { KeyScope } from '../../core/deps.js';
import { ApiError } from '../../core/errors.js';
import {
  type AuthorizeRequest,
  approve,
  checkAuthorizeRequest,
  FatalAuthorizeError,
  grantableOrgs,
  listGrants,
  mayRevokeGrant,
  OAUTH_SCOPES,
  OAuthError,
  redirectBack,
  revokeGrantById,
  widest,
} from '../../services/oauth.js';
import { Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { CsrfField, done, Empty, ErrorBox, PostForm, page, Time } from '../render.js';
import { consentCsp } from '../security.js';

const SCOPE_TEXT: Record<KeyScope, string> = {
  submit: 'submit: send submissions to your forms',
  read: 'read: read your forms, submissions and deliveries (and submit)',
  manage: 'manage: change forms, routes and destinations, as you can on this dashboard',
};

/** The authorization request's parameters, from the query (GET) or the consent form's hidden fields (POST). */
const PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'resource',
] as const;

function paramsOf(source: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of PARAMS) {
    const v = source[k];
    if (typeof v === 'string' && v.length <= 2000) out[k] = v;
  }
  return out;
}

/**
 * Checks the request: a fatal problem is the page's error; any other is sent back to the client's
 * redirect URI (RFC 6749 §4.1.2.1). Returns either the checked request or the answer to give.
 */
async function checked(
  c: Context<DashEnv>,
  params: Record<string, string | undefined>,
): Promise<AuthorizeRequest | Response> {
  try {
    return await checkAuthorizeRequest(c.var.deps, params);
  } catch (err) {
    if (err instanceof FatalAuthorizeError) {
      return page(c, { title: 'Cannot connect', status: 400 }, <ErrorBox message={err.message} hint={err.hint} />);
    }
    if (!(err instanceof OAuthError)) throw err;
    // The client and its redirect URI are known here (only the fatal errors come before).
    const back = redirectBack(c.var.deps, redirectOf(params), {
      error: err.error,
      error_description: err.message,
      state: params.state,
    });
    return c.redirect(back, 303);
  }
}

const redirectOf = (p: Record<string, string | undefined>) => p.redirect_uri ?? '';

/**
 * The consent page of the OAuth authorization endpoint (/app/oauth/authorize): signed in (the
 * session gate sends a signed-out person to sign in and back here), the person sees the client's
 * name, where it sends them back and the scope it asks for, chooses the organization and approves
 * or denies. Its CSP lets the form's answer redirect to the registered redirect URI's origin.
 */
async function consentPage(c: Context<DashEnv>, req: AuthorizeRequest, params: Record<string, string | undefined>) {
  const orgs = await grantableOrgs(c.var.deps, c.var.actor.userId as string);
  const asked = widest(req.scopes);
  const offered = OAUTH_SCOPES.filter((s) => OAUTH_SCOPES.indexOf(s) <= OAUTH_SCOPES.indexOf(asked));
  const target = new URL(req.redirectUri);
  c.header('Content-Security-Policy', consentCsp(target.origin));
  return page(
    c,
    { title: `Connect ${req.client.name}` },
    <section class="card" aria-labelledby="consent-h">
      <h1 id="consent-h">Connect “{req.client.name}” to formsvc?</h1>
      <p>
        This application asks to act as <strong>{c.var.email ?? 'you'}</strong>. After you decide, you go back to{' '}
        <strong>{target.host}</strong>
        {target.protocol === 'http:' ? ' (an application on this computer)' : ''}.
      </p>
      <p class="muted">It asked for: {req.scopes.join(', ')}. You can give it less.</p>
      <form method="post" action="/app/oauth/authorize">
        <CsrfField c={c} />
        {PARAMS.map((k) => (params[k] === undefined ? null : <input type="hidden" name={k} value={params[k]} />))}
        <label for="org_id">Organization</label>
        <select id="org_id" name="org_id">
          {orgs.map((o) => (
            <option value={o.id} selected={o.id === c.var.actor.orgId}>
              {o.name} ({o.role})
            </option>
          ))}
        </select>
        <fieldset>
          <legend>Access</legend>
          {offered.map((s) => (
            <label class="check">
              <input type="radio" name="grant_scope" value={s} checked={s === asked} /> {SCOPE_TEXT[s]}
            </label>
          ))}
        </fieldset>
        <p class="muted">
          What you cannot do in the organization, it cannot either. You can disconnect it any time on Team › API keys.
        </p>
        <p>
          <button type="submit" name="decision" value="approve">
            Approve
          </button>{' '}
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </p>
      </form>
    </section>,
  );
}

export function registerOAuthPages(dash: Hono<DashEnv>): void {
  dash.get('/oauth/authorize', async (c) => {
    const params = paramsOf(c.req.query());
    const req = await checked(c, params);
    if (req instanceof Response) return req;
    return consentPage(c, req, params);
  });

  dash.post('/oauth/authorize', async (c) => {
    const form = await c.req.parseBody();
    const params = paramsOf(form);
    const req = await checked(c, params);
    if (req instanceof Response) return req;
    if (form.decision !== 'approve') {
      return c.redirect(
        redirectBack(c.var.deps, req.redirectUri, {
          error: 'access_denied',
          error_description: 'The person denied the request.',
          state: req.state,
        }),
        303,
      );
    }
    const scope = typeof form.grant_scope === 'string' ? form.grant_scope : '';
    if (!OAUTH_SCOPES.includes(scope as KeyScope)) {
      throw new ApiError('validation_failed', 'Choose the access to give.', { hint: 'Pick one of the options.' });
    }
    const orgId = typeof form.org_id === 'string' ? form.org_id : '';
    const code = await approve(c.var.deps, c.var.actor.userId as string, req, orgId, scope as KeyScope);
    return c.redirect(redirectBack(c.var.deps, req.redirectUri, { code, state: req.state }), 303);
  });

  dash.post('/oauth/grants/:id/revoke', async (c) => {
    await revokeGrantById(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/keys', 'Connection revoked: its tokens no longer work.');
  });
}

/** The "Connected applications" section of the Team › API keys page: the organization's OAuth grants. */
export async function ConnectedApps({ c }: { c: Context<DashEnv> }) {
  const grants = await listGrants(c.var.deps, c.var.actor);
  return (
    <section aria-labelledby="apps-h">
      <h2 id="apps-h">Connected applications (OAuth)</h2>
      <p class="muted">
        Agents connected by URL (<code>{c.var.deps.config.publicBaseUrl}/mcp</code>) with someone's approval. Access
        tokens last {Math.round(c.var.deps.config.oauthAccessTtlS / 60)} minutes and are renewed until revoked.
      </p>
      {grants.length === 0 ? (
        <Empty title="No connected applications">
          <p>Paste the /mcp URL into an agent that supports OAuth; it appears here once approved.</p>
        </Empty>
      ) : (
        <Table cols={['Application', 'Sends back to', 'Person', 'Scope', 'Connected', 'Last used', 'Revoke']}>
          {grants.map((r) => (
            <tr>
              <td>{r.clientName}</td>
              <td>
                <code>{hostOf(r.redirectUris[0])}</code>
              </td>
              <td>{r.email ?? r.g.userId}</td>
              <td>{r.g.scopes.join(', ')}</td>
              <td>
                <Time at={r.g.createdAt} />
              </td>
              <td>
                <Time at={r.g.lastUsedAt} />
              </td>
              <td>
                {mayRevokeGrant(c.var.actor, r.g) ? (
                  <PostForm
                    c={c}
                    action={`/app/oauth/grants/${encodeURIComponent(r.g.id)}/revoke`}
                    confirm={`Disconnect "${r.clientName}"? It stops working at once.`}
                  >
                    <button type="submit" class="danger" aria-label={`Revoke the connection of ${r.clientName}`}>
                      Revoke
                    </button>
                  </PostForm>
                ) : (
                  <span class="muted">owner or admin</span>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

function hostOf(uri: string | undefined): string {
  try {
    return uri ? new URL(uri).host : '';
  } catch {
    return '';
  }
}
