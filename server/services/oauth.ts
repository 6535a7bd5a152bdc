import crypto from 'node:crypto';
import { and, desc, eq, isNull } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps, KeyScope, Role } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import type { Db } from '../db/client.js';
import { memberships, oauthClients, oauthCodes, oauthGrants, oauthTokens, organizations, users } from '../db/schema.js';
import { randomToken, sha256 } from '../domain/secrets.js';
import { appendEvent } from '../events.js';
import { lazy } from '../lazy.js';

/**
 * formsvc's own OAuth 2.1 authorization server (docs/authentication.md, "OAuth"): dynamic client
 * registration (RFC 7591, public clients), the authorization code with PKCE S256, the resource
 * indicator (RFC 8707) bound into every token, rotating refresh tokens whose reuse revokes the
 * family, revocation (RFC 7009). Wire shapes and their validation come from the MCP SDK's
 * shared/auth schemas; the storage and the rules are here.
 */

/** Scopes, narrowest first; they nest as API key scopes do (manage ⊃ read ⊃ submit). */
export const OAUTH_SCOPES: readonly KeyScope[] = ['submit', 'read', 'manage'];
const RANK: Record<KeyScope, number> = { submit: 1, read: 2, manage: 3 };
const CODE_TTL_MS = 60_000;
const TOUCH_MS = 60_000;
export const ACCESS_PREFIX = 'fso_at_';
const REFRESH_PREFIX = 'fso_rt_';
const CODE_PREFIX = 'fso_ac_';

/** An OAuth error as RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 7009 word it (routes/oauth.ts renders it). */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly hint: string,
    readonly status: 400 | 401 = 400,
  ) {
    super(message);
  }
}

// Resources (RFC 8707): the service itself, its /mcp and its /v1.

const trim = (url: string) => url.replace(/\/+$/, '');

/** The resource identifiers of this service: the root, /mcp and /v1 under PUBLIC_BASE_URL. */
export function resourcesOf(baseUrl: string) {
  const root = trim(baseUrl);
  return { root, mcp: `${root}/mcp`, v1: `${root}/v1` };
}

/** A resource as sent (absolute, no fragment), compared without a trailing slash; null when malformed. */
function normalResource(value: string): string | null {
  try {
    const u = new URL(value);
    if (u.hash || (u.protocol !== 'https:' && u.protocol !== 'http:')) return null;
    return trim(u.href);
  } catch {
    return null;
  }
}

/**
 * The resources a token may be bound to and still be accepted at a door: /mcp takes tokens for the
 * service or for /mcp; /v1 also takes tokens for /mcp, since the MCP tools call /v1 with the token
 * they were given (they are a client of the same service). A token for /v1 alone is refused at /mcp.
 */
export function acceptedAt(baseUrl: string, door: 'mcp' | 'v1'): string[] {
  const r = resourcesOf(baseUrl);
  return door === 'mcp' ? [r.root, r.mcp] : [r.root, r.v1, r.mcp];
}

// Dynamic client registration (RFC 7591).

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** A redirect URI this server accepts: https, or http on a loopback host (native clients, RFC 8252); no fragment. */
export function redirectUriProblem(value: string): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `"${value.slice(0, 200)}" is not an absolute URL.`;
  }
  if (u.hash) return `The redirect URI ${u.origin}${u.pathname} has a fragment; redirect URIs cannot.`;
  if (u.username || u.password) return 'A redirect URI cannot carry a user name or password.';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && LOOPBACK.has(u.hostname)) return null;
  return `The redirect URI ${u.protocol}//${u.host} is neither https nor http on a loopback address (127.0.0.1, [::1], localhost).`;
}

/** The MCP SDK's RFC 7591 metadata schema, loaded with the first registration (the SDK is not loaded at start). */
const metadataSchema = lazy(() => import('@modelcontextprotocol/sdk/shared/auth.js'));

export async function registerClient(deps: Deps, body: unknown) {
  const { OAuthClientMetadataSchema } = await metadataSchema();
  const parsed = OAuthClientMetadataSchema.safeParse(body);
  const raw = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  // A bad redirect URI has its own error code, even where the schema also refuses it.
  const uris = Array.isArray(raw.redirect_uris) ? raw.redirect_uris : null;
  if (!uris || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === 'string')) {
    throw new OAuthError(
      'invalid_redirect_uri',
      'redirect_uris must list 1 to 10 URIs.',
      'Send {"redirect_uris": ["https://your.app/callback"]}.',
    );
  }
  for (const u of uris as string[]) {
    const problem = redirectUriProblem(u);
    if (problem) {
      throw new OAuthError(
        'invalid_redirect_uri',
        problem,
        'Use an https redirect URI, or http://127.0.0.1:<port>/… for a native client.',
      );
    }
  }
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new OAuthError(
      'invalid_client_metadata',
      `The client metadata field ${first?.path.join('.') || '(body)'} is invalid: ${first?.message ?? 'malformed'}.`,
      'Send the RFC 7591 client metadata as JSON.',
    );
  }
  const meta = parsed.data;
  if (meta.token_endpoint_auth_method && meta.token_endpoint_auth_method !== 'none') {
    throw new OAuthError(
      'invalid_client_metadata',
      `token_endpoint_auth_method "${meta.token_endpoint_auth_method}" is not supported: clients are public.`,
      'Register with "token_endpoint_auth_method": "none" and use PKCE.',
    );
  }
  const grants = meta.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!grants.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
    throw new OAuthError(
      'invalid_client_metadata',
      'grant_types may hold only "authorization_code" and "refresh_token".',
      'Leave grant_types out, or send ["authorization_code", "refresh_token"].',
    );
  }
  if (meta.response_types && !meta.response_types.every((r) => r === 'code')) {
    throw new OAuthError('invalid_client_metadata', 'response_types may hold only "code".', 'Send ["code"].');
  }
  const name = (meta.client_name ?? '').trim().slice(0, 100) || 'Unnamed client';
  const now = deps.now();
  const [row] = await deps.database.db
    .insert(oauthClients)
    .values({ id: newId('oauthClient'), name, redirectUris: uris as string[], createdAt: now })
    .returning();
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: row.name,
    redirect_uris: row.redirectUris,
    grant_types: grants,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

// The authorization request (RFC 6749 §4.1.1 with PKCE and resource).

/** An authorization request that cannot be sent back to the client (unknown client, unregistered redirect URI). */
export class FatalAuthorizeError extends ApiError {}

export interface AuthorizeRequest {
  client: typeof oauthClients.$inferSelect;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  scopes: KeyScope[];
  resource: string;
}

/**
 * Checks an authorization request. Problems with the client or its redirect URI are fatal (shown
 * on the page, never redirected: RFC 6749 §4.1.2.1); the rest is an OAuthError the page sends back
 * to the redirect URI.
 */
export async function checkAuthorizeRequest(
  deps: Deps,
  q: Record<string, string | undefined>,
): Promise<AuthorizeRequest> {
  const clientId = q.client_id ?? '';
  const [client] = clientId
    ? await deps.database.db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1)
    : [];
  if (!client) {
    throw new FatalAuthorizeError('bad_request', `No OAuth client "${clientId.slice(0, 80)}" is registered here.`, {
      hint: 'The application must register first (POST /oauth/register); start the connection again from it.',
    });
  }
  const redirectUri = q.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : '');
  if (!client.redirectUris.includes(redirectUri)) {
    throw new FatalAuthorizeError('bad_request', 'The redirect_uri is not one the client registered.', {
      hint: 'The application must send exactly a redirect URI it registered; start the connection again from it.',
    });
  }
  if (q.response_type !== 'code') {
    throw new OAuthError(
      'unsupported_response_type',
      'Only response_type=code is supported.',
      'Send response_type=code.',
    );
  }
  if (q.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge ?? '')) {
    throw new OAuthError(
      'invalid_request',
      'PKCE is required: code_challenge (43 characters of base64url) with code_challenge_method=S256.',
      'Send the S256 challenge of a random code_verifier.',
    );
  }
  const asked = (q.scope ?? '').split(' ').filter(Boolean);
  const unknown = asked.filter((s) => !OAUTH_SCOPES.includes(s as KeyScope));
  if (unknown.length) {
    throw new OAuthError(
      'invalid_scope',
      `Unknown scope ${unknown.map((s) => `"${s.slice(0, 40)}"`).join(', ')}.`,
      'Scopes are submit, read and manage.',
    );
  }
  // No scope asked: the narrowest, read.
  const scopes = (asked.length ? asked : ['read']) as KeyScope[];
  const known = resourcesOf(deps.config.publicBaseUrl);
  const resource = q.resource === undefined ? known.root : normalResource(q.resource);
  if (!resource || !Object.values(known).includes(resource)) {
    throw new OAuthError(
      'invalid_target',
      `The resource ${String(q.resource).slice(0, 200)} is not served here.`,
      `Ask for ${known.mcp} (or ${known.root}).`,
    );
  }
  return { client, redirectUri, state: q.state, codeChallenge: q.code_challenge as string, scopes, resource };
}

/** The widest of the asked scopes: the one the person approves (narrower ones are inside it). */
export const widest = (scopes: KeyScope[]): KeyScope => scopes.reduce((a, b) => (RANK[b] > RANK[a] ? b : a));

/** Where the client is sent back, with its parameters (RFC 6749 §4.1.2, RFC 9207's iss). */
export function redirectBack(deps: Deps, redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  u.searchParams.set('iss', resourcesOf(deps.config.publicBaseUrl).root);
  return u.href;
}

/** The organizations a person may grant access to: the ones they are a member of, with their role. */
export async function grantableOrgs(deps: Deps, userId: string) {
  return deps.database.db
    .select({ id: organizations.id, name: organizations.name, role: memberships.role })
    .from(memberships)
    .innerJoin(organizations, eq(organizations.id, memberships.orgId))
    .where(eq(memberships.userId, userId))
    .orderBy(organizations.name);
}

/** Approval on the consent page: a one-use code for the chosen organization and scope. */
export async function approve(deps: Deps, userId: string, req: AuthorizeRequest, orgId: string, scope: KeyScope) {
  const orgs = await grantableOrgs(deps, userId);
  if (!orgs.some((o) => o.id === orgId)) throw notFound('organization', orgId);
  if (!req.scopes.some((s) => RANK[s] >= RANK[scope])) {
    throw new ApiError('validation_failed', `The application did not ask for the "${scope}" scope.`, {
      hint: `Choose one of ${req.scopes.join(', ')} or narrower.`,
    });
  }
  const code = `${CODE_PREFIX}${randomToken(40)}`;
  await deps.database.db.insert(oauthCodes).values({
    hash: sha256(code),
    clientId: req.client.id,
    orgId,
    userId,
    scopes: [scope],
    resource: req.resource,
    redirectUri: req.redirectUri,
    codeChallenge: req.codeChallenge,
    expiresAt: new Date(deps.now().getTime() + CODE_TTL_MS),
  });
  return code;
}

// The token endpoint.

const s256 = (verifier: string) => crypto.createHash('sha256').update(verifier).digest('base64url');

const invalidGrant = (message: string, hint = 'Start the authorization again.') =>
  new OAuthError('invalid_grant', message, hint);

async function issue(tx: Db, deps: Deps, grant: typeof oauthGrants.$inferSelect) {
  const access = `${ACCESS_PREFIX}${randomToken(40)}`;
  const refresh = `${REFRESH_PREFIX}${randomToken(40)}`;
  const now = deps.now().getTime();
  const { oauthAccessTtlS, oauthRefreshTtlS } = deps.config;
  await tx.insert(oauthTokens).values([
    { hash: sha256(access), grantId: grant.id, kind: 'access', expiresAt: new Date(now + oauthAccessTtlS * 1000) },
    { hash: sha256(refresh), grantId: grant.id, kind: 'refresh', expiresAt: new Date(now + oauthRefreshTtlS * 1000) },
  ]);
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: oauthAccessTtlS,
    refresh_token: refresh,
    scope: grant.scopes.join(' '),
  };
}

/** Revokes a grant (every token of its family) and records it; false when it was revoked already. */
async function revokeGrant(tx: Db, deps: Deps, grantId: string, reason: string, by?: string): Promise<boolean> {
  const [g] = await tx
    .update(oauthGrants)
    .set({ revokedAt: deps.now() })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
    .returning();
  if (!g) return false;
  await appendEvent(tx, {
    orgId: g.orgId,
    type: 'oauth.revoked',
    subject: { grant_id: g.id, client_id: g.clientId },
    data: { reason, user_id: g.userId, ...(by ? { by } : {}) },
    now: deps.now(),
  });
  return true;
}

function checkResourceParam(sent: string | undefined, bound: string) {
  if (sent === undefined) return;
  if (normalResource(sent) !== bound) {
    throw new OAuthError(
      'invalid_target',
      'The resource differs from the one the grant was made for.',
      `Send resource=${bound}, or leave it out.`,
    );
  }
}

export async function exchangeCode(deps: Deps, p: Record<string, string | undefined>) {
  if (!p.code || !p.client_id) {
    throw new OAuthError('invalid_request', 'code and client_id are required.', 'Send the code the redirect carried.');
  }
  const db = deps.database.db;
  const [row] = await db
    .select()
    .from(oauthCodes)
    .where(eq(oauthCodes.hash, sha256(p.code)))
    .limit(1);
  if (!row || row.clientId !== p.client_id) throw invalidGrant('The authorization code is unknown.');
  if (row.usedAt) {
    // A code used twice was intercepted or replayed: whatever it was exchanged for is revoked (RFC 6749 §4.1.2).
    if (row.grantId) await db.transaction((tx) => revokeGrant(tx, deps, row.grantId as string, 'code_reused'));
    throw invalidGrant('The authorization code was used already; the tokens it gave are revoked.');
  }
  if (row.expiresAt <= deps.now()) throw invalidGrant('The authorization code expired (codes last 60 seconds).');
  if (p.redirect_uri !== row.redirectUri) {
    throw invalidGrant(
      'redirect_uri differs from the one of the authorization request.',
      'Send the same redirect_uri as in the authorization request.',
    );
  }
  if (!p.code_verifier) {
    throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).', 'Send the verifier of the challenge.');
  }
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(p.code_verifier) || s256(p.code_verifier) !== row.codeChallenge) {
    throw invalidGrant('The code_verifier does not match the code_challenge.', 'Send the verifier of this request.');
  }
  checkResourceParam(p.resource, row.resource);
  return db.transaction(async (tx) => {
    const grant = {
      id: newId('oauthGrant'),
      orgId: row.orgId,
      userId: row.userId,
      clientId: row.clientId,
      scopes: row.scopes,
      resource: row.resource,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: deps.now(),
    };
    // One use: the row is taken here, so of two concurrent exchanges one wins.
    const taken = await tx
      .update(oauthCodes)
      .set({ usedAt: deps.now(), grantId: grant.id })
      .where(and(eq(oauthCodes.hash, row.hash), isNull(oauthCodes.usedAt)))
      .returning({ hash: oauthCodes.hash });
    if (!taken.length) throw invalidGrant('The authorization code was used already.');
    await tx.insert(oauthGrants).values(grant);
    const [client] = await tx.select().from(oauthClients).where(eq(oauthClients.id, row.clientId));
    await appendEvent(tx, {
      orgId: row.orgId,
      type: 'oauth.granted',
      subject: { grant_id: grant.id, client_id: row.clientId },
      data: { client_name: client?.name ?? '', scopes: row.scopes, resource: row.resource, user_id: row.userId },
      now: deps.now(),
    });
    return issue(tx, deps, grant);
  });
}

export async function refresh(deps: Deps, p: Record<string, string | undefined>) {
  if (!p.refresh_token || !p.client_id) {
    throw new OAuthError('invalid_request', 'refresh_token and client_id are required.', 'Send both.');
  }
  const db = deps.database.db;
  const [row] = await db
    .select({ t: oauthTokens, g: oauthGrants })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(and(eq(oauthTokens.hash, sha256(p.refresh_token)), eq(oauthTokens.kind, 'refresh')))
    .limit(1);
  if (!row || row.g.clientId !== p.client_id) throw invalidGrant('The refresh token is unknown.');
  if (row.g.revokedAt) throw invalidGrant('The refresh token was revoked.');
  if (row.t.usedAt) {
    await db.transaction((tx) => revokeGrant(tx, deps, row.g.id, 'refresh_reused'));
    throw invalidGrant('The refresh token was used already; every token of this grant is now revoked.');
  }
  if (row.t.expiresAt <= deps.now()) throw invalidGrant('The refresh token expired.');
  checkResourceParam(p.resource, row.g.resource);
  if (p.scope) {
    const asked = p.scope.split(' ').filter(Boolean);
    if (!asked.every((s) => row.g.scopes.includes(s))) {
      throw new OAuthError('invalid_scope', 'A refresh cannot widen the scope.', `The grant has ${row.g.scopes}.`);
    }
  }
  const outcome = await db.transaction(async (tx) => {
    const taken = await tx
      .update(oauthTokens)
      .set({ usedAt: deps.now() })
      .where(and(eq(oauthTokens.hash, row.t.hash), isNull(oauthTokens.usedAt)))
      .returning({ hash: oauthTokens.hash });
    if (!taken.length) return null;
    return issue(tx, deps, row.g);
  });
  if (outcome) return outcome;
  // Lost the race against another use of the same token: that is a reuse too.
  await db.transaction((tx) => revokeGrant(tx, deps, row.g.id, 'refresh_reused'));
  throw invalidGrant('The refresh token was used already; every token of this grant is now revoked.');
}

/** RFC 7009: revokes the grant of an access or refresh token; unknown tokens are no error. */
export async function revokeToken(deps: Deps, p: Record<string, string | undefined>) {
  if (!p.token) throw new OAuthError('invalid_request', 'token is required.', 'Send token=<the token>.');
  const db = deps.database.db;
  const [row] = await db
    .select({ g: oauthGrants })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.hash, sha256(p.token)))
    .limit(1);
  if (!row) return;
  if (p.client_id && p.client_id !== row.g.clientId) {
    throw new OAuthError('invalid_client', 'The token was not issued to this client.', 'Send your own client_id.', 401);
  }
  await db.transaction((tx) => revokeGrant(tx, deps, row.g.id, 'client_revoked'));
}

// The protected resource side: an access token as the caller.

/** The actor of an OAuth access token at `door`, or null (unknown, expired, revoked, other resource, membership gone). */
export async function tokenActor(deps: Deps, secret: string, door: 'mcp' | 'v1'): Promise<Actor | null> {
  const { database, now, log } = deps;
  const [row] = await database.db
    .select({ t: oauthTokens, g: oauthGrants, role: memberships.role })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(memberships, and(eq(memberships.userId, oauthGrants.userId), eq(memberships.orgId, oauthGrants.orgId)))
    .where(and(eq(oauthTokens.hash, sha256(secret)), eq(oauthTokens.kind, 'access')))
    .limit(1);
  const t = now();
  if (!row || row.g.revokedAt || row.t.expiresAt <= t) return null;
  if (!acceptedAt(deps.config.publicBaseUrl, door).includes(row.g.resource)) return null;
  // Last use, cheaply: at most one write a minute per grant.
  if (!row.g.lastUsedAt || t.getTime() - row.g.lastUsedAt.getTime() > TOUCH_MS) {
    database.db
      .update(oauthGrants)
      .set({ lastUsedAt: t })
      .where(eq(oauthGrants.id, row.g.id))
      .catch((err: unknown) => log.warn({ err }, 'could not record token use'));
  }
  return {
    kind: 'oauth',
    orgId: row.g.orgId,
    scopes: row.g.scopes as KeyScope[],
    role: row.role as Role,
    userId: row.g.userId,
    grantId: row.g.id,
  };
}

// The dashboard's list and revoke.

/** The organization's active grants, newest first, with the client and the person. */
export async function listGrants(deps: Deps, actor: Actor) {
  return deps.database.db
    .select({
      g: oauthGrants,
      clientName: oauthClients.name,
      redirectUris: oauthClients.redirectUris,
      email: users.email,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .leftJoin(users, eq(users.id, oauthGrants.userId))
    .where(and(eq(oauthGrants.orgId, actor.orgId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.id))
    .limit(200);
}

/** Whether the actor may revoke a grant: their own, or anyone's for an owner or admin. */
export const mayRevokeGrant = (actor: Actor, grant: { userId: string }) =>
  actor.userId === grant.userId || actor.role === 'owner' || actor.role === 'admin';

export async function revokeGrantById(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  const [g] = await db
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.id, id), eq(oauthGrants.orgId, actor.orgId)))
    .limit(1);
  if (!g) throw notFound('OAuth grant', id);
  if (!mayRevokeGrant(actor, g)) {
    throw new ApiError('forbidden', 'Only its owner, or an owner or admin, can revoke this connection.', {
      hint: 'Ask an owner or admin of the organization.',
    });
  }
  await db.transaction((tx) => revokeGrant(tx, deps, g.id, 'dashboard', actor.userId));
}
