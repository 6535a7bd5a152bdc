import type { AppEnv } from '../http/context.js';

/**
 * The dashboard's Hono environment: the API's variables (deps, request id, client IP, and the
 * session's actor on every page behind sign-in) plus the page's CSRF token.
 */
export type DashEnv = {
  Variables: AppEnv['Variables'] & {
    /** The token every state-changing form of this page carries (`_csrf`), or sends as `X-CSRF-Token`. */
    csrf: string;
    /** The signed-in person's email, for the header. */
    email?: string;
    /** Owners and admins: how many destinations wait for their approval (the banner on every page). */
    approvalsPending?: number;
  };
};
