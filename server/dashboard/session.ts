import { eq } from 'drizzle-orm';
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { users } from '../db/schema.js';
import { SESSION_COOKIE, sessionActor } from '../http/auth.js';
import { pendingCount } from '../services/destination-approval.js';
import type { DashEnv } from './env.js';
import { preSessionCsrf, sessionCsrf } from './security.js';

/** Paths under /app that a signed-out visitor may open. */
const PUBLIC = [/^\/app\/sign-in(\/|$)/, /^\/app\/assets\//, /^\/app\/invitations\//];

export const isPublicPath = (path: string) => PUBLIC.some((re) => re.test(path));

/**
 * Resolves the session cookie (the one POST /v1/auth/sign-in sets) into the same actor the API
 * uses. A signed-out visit to a page behind sign-in goes to /app/sign-in?next=<where it was going>.
 * Sets `csrf`: the session's token, or a signed-out visitor's pre-session token.
 */
export const sessionGate: MiddlewareHandler<DashEnv> = async (c, next) => {
  const deps = c.var.deps;
  const token = getCookie(c, SESSION_COOKIE);
  const actor = token ? await sessionActor(deps, token) : null;
  if (actor?.sessionId) {
    c.set('actor', actor);
    c.set('csrf', await sessionCsrf(deps, actor.sessionId));
    if (actor.userId) {
      const [u] = await deps.database.db
        .select({ email: users.email })
        .from(users)
        .where(eq(users.id, actor.userId))
        .limit(1);
      if (u) c.set('email', u.email);
    }
    if (actor.role === 'owner' || actor.role === 'admin') {
      c.set('approvalsPending', await pendingCount(deps.database.db, actor.orgId));
    }
    return next();
  }
  if (isPublicPath(c.req.path)) {
    c.set('csrf', preSessionCsrf(c));
    return next();
  }
  const url = new URL(c.req.url);
  const back = c.req.method === 'GET' ? `${url.pathname}${url.search}` : '/app';
  return c.redirect(`/app/sign-in?next=${encodeURIComponent(back)}`, 303);
};
