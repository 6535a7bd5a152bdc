import type { Context } from 'hono';
import type { Scope } from '../../../shared/contracts/common.js';
import { ApiError } from '../../core/errors.js';
import type { DashEnv } from '../env.js';
import { allow } from '../input.js';

/**
 * allow() for any operation, including those with only path parameters (input.ts's AnyOp type has
 * no `params`, so such ops do not type-check there; the scope check is the same).
 */

/** Whether the session may run the operation: for showing or hiding a control, never instead of allow(). */
export function can(c: Context<DashEnv>, op: { 'x-scope': Scope }): boolean {
  try {
    allow(c, op);
    return true;
  } catch (err) {
    if (err instanceof ApiError) return false;
    throw err;
  }
}

/** A form's urlencoded fields; a repeated name (checkboxes) gives an array. */
export async function fieldsOf(c: Context<DashEnv>): Promise<Record<string, string | string[]>> {
  const body = await c.req.parseBody({ all: true });
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(body)) {
    if (k === '_csrf') continue;
    if (Array.isArray(v)) out[k] = v.filter((x): x is string => typeof x === 'string');
    else if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** One text field of a parsed form ('' when absent or repeated). */
export const one = (f: Record<string, string | string[]>, k: string): string => {
  const v = f[k];
  return typeof v === 'string' ? v : '';
};

/** Every value of a field that may repeat (checkboxes). */
export const all = (f: Record<string, string | string[]>, k: string): string[] => {
  const v = f[k];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** The message of an issue at `path` (for showing next to its field). */
export const issueAt = (issues: Array<{ path: string; message: string }>, path: string) =>
  issues
    .filter((i) => i.path === path || i.path.startsWith(`${path}.`) || i.path.startsWith(`${path}[`))
    .map((i) => i.message)
    .join('; ');

/** The hint under a refused form: the API's, except "details.issues", which on a page are the marked fields. */
export const formHint = (err: ApiError) =>
  err.code === 'validation_failed' ? 'Fix the fields marked below and send again.' : err.hint;
