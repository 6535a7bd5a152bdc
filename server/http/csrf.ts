import crypto from 'node:crypto';
import type { Context } from 'hono';
import type { Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { serverKey } from '../domain/file-links.js';
import type { AppEnv } from './context.js';

const KEY_NAME = 'dashboard_csrf';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A session's CSRF token (the dashboard's `_csrf` field, `X-CSRF-Token` on /v1): an HMAC of its id
 * under a server key, so it needs no storage and dies with the session.
 */
export async function sessionCsrf(deps: Deps, sessionId: string): Promise<string> {
  const key = await serverKey(deps.database, KEY_NAME);
  return crypto.createHmac('sha256', key).update(`session:${sessionId}`).digest('base64url');
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

/**
 * A /v1 request that the session cookie authenticates and that changes something (any method but
 * GET, HEAD, OPTIONS) must come from this service's own pages: `Sec-Fetch-Site: same-origin`, or
 * an `Origin` equal to PUBLIC_BASE_URL's, or the session's CSRF token in `X-CSRF-Token`. SameSite=Lax
 * keeps the cookie off cross-site posts, but not off a same-site page (another port of the host, a
 * sibling subdomain); this refuses those. Bearer keys are no ambient credential and are not checked.
 */
export async function checkCookieRequest(c: Context<AppEnv>, sessionId: string): Promise<void> {
  if (SAFE.has(c.req.method)) return;
  const deps = c.get('deps');
  const site = c.req.header('sec-fetch-site');
  if (site === 'same-origin') return;
  if (!site && c.req.header('origin') === new URL(deps.config.publicBaseUrl).origin) return;
  const token = c.req.header('x-csrf-token');
  if (token && same(token, await sessionCsrf(deps, sessionId))) return;
  throw new ApiError('forbidden', 'A request with the session cookie must come from this service’s own pages.', {
    hint:
      'Send it from the dashboard (same origin, or with its X-CSRF-Token header), or call the API with an ' +
      'API key (Authorization: Bearer <API_KEY>) instead of the cookie.',
  });
}
