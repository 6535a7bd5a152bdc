import { and, eq, isNull } from 'drizzle-orm';
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Scope } from '../../shared/contracts/common.js';
import { SESSION_COOKIE } from '../../shared/contracts/security.js';
import type { Actor, Deps, KeyScope, Role } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { apiKeys, memberships, sessions } from '../db/schema.js';
import { sha256 } from '../domain/secrets.js';
import { ACCESS_PREFIX, tokenActor } from '../services/oauth.js';
import type { AppEnv } from './context.js';
import { checkCookieRequest } from './csrf.js';

/** The cookie name lives in the contract, which declares it as the Session security scheme. */
export { SESSION_COOKIE };

const RANK: Record<KeyScope, number> = { submit: 1, read: 2, manage: 3 };
const TOUCH_MS = 60_000;

/** Scopes nest: manage ⊃ read ⊃ submit. */
export function hasScope(actor: Actor, needed: KeyScope): boolean {
  return actor.scopes.some((s) => RANK[s] >= RANK[needed]);
}

/**
 * Resolves the caller (Bearer API key, Bearer OAuth access token, or session cookie) and enforces
 * the operation's scope. An OAuth token acts as its person in its organization with the approved
 * scope; role rules apply as for the person's session (services check actor.role).
 */
export function authorize(scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (scope === 'public') return next();
    const header = c.req.header('authorization');
    let actor: Actor | null = null;
    if (header) {
      const m = /^Bearer\s+(\S+)$/i.exec(header.trim());
      if (!m)
        throw new ApiError(
          'unauthorized',
          'The Authorization header must be "Bearer <API_KEY>" or "Bearer <OAuth access token>".',
        );
      actor = m[1].startsWith(ACCESS_PREFIX)
        ? await tokenActor(c.get('deps'), m[1], c.req.path.startsWith('/mcp') ? 'mcp' : 'v1')
        : await keyActor(c, m[1]);
      // An invalid key or token is 401 everywhere; only a valid one on a session-only operation is 403.
      if (actor && scope === 'session') {
        throw new ApiError(
          'forbidden',
          'This operation needs a dashboard session; API keys and OAuth tokens cannot call it.',
          {
            hint: 'Sign in with POST /v1/auth/sign-in (email code) and call it with the session cookie.',
          },
        );
      }
    } else {
      const token = getCookie(c, SESSION_COOKIE);
      if (token) actor = await sessionActor(c.get('deps'), token);
      // The cookie is ambient: a change it authenticates must come from this service's own pages.
      if (actor?.sessionId) await checkCookieRequest(c, actor.sessionId);
    }
    if (!actor) throw new ApiError('unauthorized', 'Missing or invalid credentials.');
    if (scope === 'session') {
      if (actor.kind !== 'session' || (actor.role !== 'owner' && actor.role !== 'admin')) {
        throw new ApiError('forbidden', 'Only an owner or admin of the organization can do this.');
      }
    } else if (!hasScope(actor, scope)) {
      throw new ApiError(
        'forbidden',
        `This operation needs the "${scope}" scope; the key has ${actor.scopes.join(', ')}.`,
      );
    }
    c.set('actor', actor);
    return next();
  };
}

async function keyActor(c: Parameters<MiddlewareHandler<AppEnv>>[0], secret: string): Promise<Actor | null> {
  const { database, now, log } = c.get('deps');
  const [key] = await database.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.hash, sha256(secret)), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!key) return null;
  const t = now();
  if (!key.lastUsedAt || t.getTime() - key.lastUsedAt.getTime() > TOUCH_MS) {
    database.db
      .update(apiKeys)
      .set({ lastUsedAt: t })
      .where(eq(apiKeys.id, key.id))
      .catch((err: unknown) => log.warn({ err }, 'could not record key use'));
  }
  return {
    kind: 'key',
    orgId: key.orgId,
    scopes: key.scopes as KeyScope[],
    role: null,
    keyId: key.id,
    keyPrefix: key.prefix,
    // The user who minted the key (verify-code or a session), so a key can be tied to a person (claim_email, admins).
    ...(key.createdByUserId ? { userId: key.createdByUserId } : {}),
  };
}

/** The actor of a session cookie's token, or null when it is unknown, expired or signed out. */
export async function sessionActor(deps: Deps, token: string): Promise<Actor | null> {
  const { database, now } = deps;
  const [row] = await database.db
    .select({ s: sessions, role: memberships.role })
    .from(sessions)
    .innerJoin(memberships, and(eq(memberships.userId, sessions.userId), eq(memberships.orgId, sessions.activeOrgId)))
    .where(eq(sessions.tokenHash, sha256(token)))
    .limit(1);
  if (!row || row.s.expiresAt <= now()) return null;
  return {
    kind: 'session',
    orgId: row.s.activeOrgId,
    scopes: ['manage'],
    role: row.role as Role,
    userId: row.s.userId,
    sessionId: row.s.id,
  };
}

/** checkCookieRequest for an operation that reads the cookie without authorize (sign-out). */
export const cookieOrigin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = getCookie(c, SESSION_COOKIE);
  if (token) {
    const [session] = await c
      .get('deps')
      .database.db.select({ id: sessions.id })
      .from(sessions)
      .where(eq(sessions.tokenHash, sha256(token)))
      .limit(1);
    if (session) await checkCookieRequest(c, session.id);
  }
  return next();
};

/**
 * Sets the session cookie of a sign-in (POST /v1/auth/sign-in and the dashboard's sign-in page):
 * HttpOnly, SameSite=Lax, Secure behind https, for the whole site, until the session expires.
 */
export function setSessionCookie(c: Context, deps: Deps, session: { token: string; expiresAt: Date }): void {
  setCookie(c, SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: deps.config.publicBaseUrl.startsWith('https:') || c.req.header('x-forwarded-proto') === 'https',
    path: '/',
    expires: session.expiresAt,
  });
}

/** Removes the session cookie (sign-out; the session itself is deleted by the signOut service). */
export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/' });
}
