import type { Context } from 'hono';
import type { ApiError } from '../core/errors.js';

export { ApiError, notFound } from '../core/errors.js';

export function envelope(err: ApiError, baseUrl: string) {
  return {
    error: {
      code: err.code,
      message: err.message,
      hint: err.hint,
      docs: `${baseUrl}/docs/errors#${err.code}`,
      ...(err.details ? { details: err.details } : {}),
    },
  };
}

/** zod issues → details.issues [{path, message}] */
export function zodIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code?: string }>) {
  return issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));
}

/**
 * Whether the client closed the connection before its answer (the request's signal aborts then).
 * Reading the rest of its body fails with ECONNRESET, which must not pass for the database's.
 */
export function clientGone(c: Context): boolean {
  return c.req.raw.signal.aborted;
}
