import type { MiddlewareHandler } from 'hono';
import { releaseCodeTry, takeCodeTry } from '../services/code-tries.js';
import type { AppEnv } from './context.js';

/** The address a body names, as the contract's Email reads it (trimmed, lowercased), or null. */
function addressOf(text: string): string | null {
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object' && 'email' in body && typeof body.email === 'string') {
      return body.email.trim().toLowerCase() || null;
    }
  } catch {
    // not JSON: validation answers it; the try still counts for the IP
  }
  return null;
}

/**
 * The operations that carry an email code (verify-code, sign-in): every request takes a try from
 * the address's budget and the client IP's limit first, before its Idempotency-Key is looked at,
 * so neither a new key nor a replay lets anyone test a code for free (429 with Retry-After beyond).
 * The handler's service gives the try back when the code is right. Given back here: a replayed
 * success (which only the exact first request, right code included, can have), and a body refused
 * before any code was compared (400, 422). A wrong code and a replayed 401 keep counting.
 */
export const codeTries: MiddlewareHandler<AppEnv> = async (c, next) => {
  const deps = c.get('deps');
  const attempt = await takeCodeTry(deps, addressOf(await c.req.text()), c.get('clientIp'));
  c.set('codeTry', attempt);
  await next();
  const status = c.res.status;
  if (status < 300 || status === 400 || status === 422) await releaseCodeTry(deps, attempt);
};
