import crypto from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { sessionCsrf } from '../http/csrf.js';
import type { DashEnv } from './env.js';

/**
 * Every dashboard page: scripts and styles only from this origin (no inline script or style), no
 * framing, forms post only here. The hosted form page (/f/{formId}) sets its own policy.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/**
 * The OAuth consent page's policy: the dashboard's, with form-action also allowing the origin of the
 * client's registered redirect URI, where the approval's answer redirects (form-action applies to
 * redirects after a form post).
 */
export function consentCsp(redirectOrigin: string): string {
  return DASHBOARD_CSP.replace("form-action 'self'", `form-action 'self' ${redirectOrigin}`);
}

export const securityHeaders: MiddlewareHandler<DashEnv> = async (c, next) => {
  await next();
  // A page may widen form-action for one origin (the consent page); nothing else differs.
  const own = c.res.headers.get('Content-Security-Policy');
  const widened = own ? /form-action 'self' (https?:\/\/[^\s;']+);/.exec(own) : null;
  c.header('Content-Security-Policy', own && widened && own === consentCsp(widened[1]) ? own : DASHBOARD_CSP);
  c.header('X-Frame-Options', 'DENY');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'same-origin');
  if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
};

/** The cookie that carries a signed-out visitor's CSRF token (sign-in forms), double-submit style. */
export const PRE_SESSION_COOKIE = 'formsvc_csrf';
/** A session's CSRF token (the one /v1 takes in X-CSRF-Token too). */
export { sessionCsrf };

/** A signed-out visitor's token: the random value of its pre-session cookie (made on first sight). */
export function preSessionCsrf(c: Context<DashEnv>): string {
  const known = getCookie(c, PRE_SESSION_COOKIE);
  if (known && /^[A-Za-z0-9_-]{32,64}$/.test(known)) return known;
  const fresh = crypto.randomBytes(24).toString('base64url');
  setCookie(c, PRE_SESSION_COOKIE, fresh, { httpOnly: true, sameSite: 'Strict', path: '/app' });
  return fresh;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/**
 * Refuses a state-changing request (anything but GET/HEAD) whose token (form field `_csrf` or
 * header `X-CSRF-Token`) is not this page's `csrf`, or that a browser says came from another site.
 * Runs after the session middleware has set `csrf`.
 */
export function csrfGuard(refuse: (c: Context<DashEnv>) => Response | Promise<Response>): MiddlewareHandler<DashEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const site = c.req.header('sec-fetch-site');
    if (site && site !== 'same-origin' && site !== 'none') return refuse(c);
    let sent = c.req.header('x-csrf-token') ?? '';
    if (
      !sent &&
      /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(c.req.header('content-type') ?? '')
    ) {
      const body = await c.req.parseBody();
      sent = typeof body._csrf === 'string' ? body._csrf : '';
    }
    if (!sent || !same(sent, c.get('csrf'))) return refuse(c);
    return next();
  };
}
