import type { z } from 'zod';
import type { Scope } from '../../shared/contracts/common.js';
import { ApiError } from '../core/errors.js';
import { hasScope } from '../http/auth.js';
import { zodIssues } from '../http/errors.js';
import type { DashEnv } from './env.js';

type AnyOp = {
  'x-scope': Scope;
  request?: {
    body?: { content: { 'application/json': { schema: z.ZodType } } };
    query?: z.ZodType;
    params?: z.ZodType;
  };
};
type BodyOf<O extends AnyOp> = O['request'] extends { body: { content: { 'application/json': { schema: infer S } } } }
  ? S extends z.ZodType
    ? z.output<S>
    : never
  : never;

/**
 * A dashboard form's fields as the operation's JSON body, checked by the same schema the /v1
 * route checks (a failure is the same `validation_failed` ApiError, with `details.issues`).
 */
export function bodyFor<O extends AnyOp>(op: O, value: unknown): BodyOf<O> {
  const schema = op.request?.body?.content['application/json'].schema;
  if (!schema) throw new Error('this operation has no JSON body');
  const r = schema.safeParse(value);
  if (!r.success) {
    throw new ApiError('validation_failed', 'Some fields are not valid.', {
      details: { issues: zodIssues(r.error.issues) },
    });
  }
  return r.data as BodyOf<O>;
}

/** The operation's query schema applied to the page's query string (list filters, cursors). */
export function queryFor<O extends AnyOp>(op: O, value: unknown) {
  const schema = op.request?.query;
  if (!schema) throw new Error('this operation has no query');
  const r = schema.safeParse(value);
  if (!r.success) {
    throw new ApiError('validation_failed', 'Some filters are not valid.', {
      details: { issues: zodIssues(r.error.issues) },
    });
  }
  return r.data as O['request'] extends { query: infer Q } ? (Q extends z.ZodType ? z.output<Q> : never) : never;
}

/**
 * The operation's scope check, as /v1's authorize does it, for the signed-in person: a page runs an
 * operation only when its API route would let the same session run it.
 */
export function allow(c: { var: DashEnv['Variables'] }, op: { 'x-scope': Scope }): void {
  const scope = op['x-scope'];
  const actor = c.var.actor;
  if (scope === 'public') return;
  if (scope === 'session') {
    if (actor.role !== 'owner' && actor.role !== 'admin') {
      throw new ApiError('forbidden', 'Only an owner or admin of the organization can do this.');
    }
    return;
  }
  if (!hasScope(actor, scope)) throw new ApiError('forbidden', `This needs the "${scope}" scope.`);
}

/** `details.issues` of a validation error, for showing next to the fields. */
export function issuesOf(err: unknown): Array<{ path: string; message: string }> {
  if (!(err instanceof ApiError)) return [];
  const issues = err.details?.issues;
  return Array.isArray(issues) ? (issues as Array<{ path: string; message: string }>) : [];
}
