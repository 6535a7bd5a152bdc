/**
 * Database errors that are about reaching the database, not about the statement: the request that
 * met one answers 503 and may be retried, and the process keeps running.
 */

/** Socket errors, and postgres.js's own codes for a connection that closed, ended, was destroyed or timed out. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** SQLSTATEs: server shutting down or crashed (57P01, 57P02), starting up (57P03), out of connections (53300). */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Codes of an established connection that is gone: the socket was reset or closed, or the server ended the session. */
const LOST = new Set(['ECONNRESET', 'EPIPE', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', '57P01', '57P02']);

/** Every `code` on the error, its causes (drizzle wraps driver errors) and aggregated errors (dual-stack connects). */
function codesOf(err: unknown, depth = 0): string[] {
  if (!err || typeof err !== 'object' || depth > 4) return [];
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, depth + 1)) : [];
  return [...own, ...codesOf(e.cause, depth + 1), ...nested];
}

/** The database could not be reached or the connection was lost: answer 503, retry later. */
export function isDbUnavailable(err: unknown): boolean {
  return codesOf(err).some((c) => UNREACHABLE.has(c) || UNAVAILABLE_STATES.has(c) || c.startsWith('08'));
}

/** The connection a statement ran on is gone (as opposed to a new connection being refused). */
export function isConnectionLost(err: unknown): boolean {
  return codesOf(err).some((c) => LOST.has(c));
}

/**
 * SQLSTATEs of a value the database cannot hold: a NUL byte in text (22021) or a Unicode escape
 * jsonb refuses (22P05). They come from what a client sent, so they answer 422, never 500.
 */
const UNSTORABLE_STATES = new Set(['22021', '22P05']);

/** A statement failed on a value from the request that cannot be stored. */
export function isUnstorableValue(err: unknown): boolean {
  return codesOf(err).some((c) => UNSTORABLE_STATES.has(c));
}
