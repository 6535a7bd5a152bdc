import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { ApiError } from '../../core/errors.js';
import type { DashEnv } from '../env.js';
import { issuesOf } from '../input.js';
import type { PageOptions } from '../render.js';

/** Field issues (`{path, message}`, paths like `settings.rate_limit.max`) of a failed action. */
export type Issue = { path: string; message: string };

/** What a failed action shows again: its message and hint, and the issues to put next to fields. */
export interface Failure {
  message: string;
  hint?: string;
  issues: Issue[];
}

export function failureOf(err: unknown): Failure {
  if (!(err instanceof ApiError)) throw err;
  return { message: err.message, hint: err.hint, issues: issuesOf(err) };
}

/** The page status for an error the page shows itself (a page can only answer the frame's statuses). */
export function statusOf(err: unknown): NonNullable<PageOptions['status']> {
  const s = err instanceof ApiError ? err.status : 400;
  return ([400, 403, 404, 409, 422, 429] as const).find((x) => x === s) ?? 400;
}

/** The issues about `path` or anything inside it (`settings.rate_limit` takes `settings.rate_limit.max`). */
export const issuesAt = (issues: Issue[] | undefined, ...paths: string[]) =>
  (issues ?? []).filter((i) => paths.some((p) => i.path === p || i.path.startsWith(`${p}.`)));

/** The issues no field of the page claims, for the box at the top of the form. */
export const unclaimed = (issues: Issue[], claimed: string[]) =>
  issues.filter((i) => !claimed.some((p) => i.path === p || i.path.startsWith(`${p}.`)));

/** The aria attributes of a control with these issues, shown in the element `errId` (after its help `helpId`). */
export function ariaOf(issues: Issue[], errId: string, helpId?: string) {
  const bad = issues.length > 0;
  const ids = [helpId, bad ? errId : undefined].filter(Boolean).join(' ');
  return { 'aria-invalid': bad ? 'true' : undefined, 'aria-describedby': ids || undefined };
}

/** The messages about one field, right under it; `id` is what the control's aria-describedby names. */
export const FieldError: FC<{ id: string; issues: Issue[] }> = ({ id, issues }) =>
  issues.length ? (
    <div id={id}>
      {issues.map((i) => (
        <p class="field-error">{i.message}</p>
      ))}
    </div>
  ) : null;

/** A posted form's fields as strings (files are not expected on these forms). */
export async function fieldsOf(c: Context<DashEnv>): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** "a, b  c" → ["a","b","c"]; undefined when nothing is given. */
export function listOfWords(s: string | undefined, sep = /[\s,]+/): string[] | undefined {
  const out = (s ?? '')
    .split(sep)
    .map((x) => x.trim())
    .filter(Boolean);
  return out.length ? out : undefined;
}

/**
 * A number field as the operation's schema should see it: undefined when empty, a number when it
 * reads as one, else the text itself (so the schema's own message says what is wrong).
 */
export function numberField(s: string | undefined): number | string | undefined {
  const t = (s ?? '').trim();
  if (!t) return undefined;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

/** The tabs of one form's pages. */
export const FormTabs: FC<{ formId: string; current: 'settings' | 'schema' }> = ({ formId, current }) => (
  <nav aria-label="Form pages" class="row form-tabs">
    <a href={`/app/forms/${encodeURIComponent(formId)}`} aria-current={current === 'settings' ? 'page' : undefined}>
      Settings and embed
    </a>
    <a
      href={`/app/forms/${encodeURIComponent(formId)}/schema`}
      aria-current={current === 'schema' ? 'page' : undefined}
    >
      Schema and drift
    </a>
    <a href={`/app?form_id=${encodeURIComponent(formId)}`}>Submissions</a>
  </nav>
);

export const formPath = (id: string) => `/app/forms/${encodeURIComponent(id)}`;

/**
 * An operation's scope alone, for `allow()`: its parameter type takes only operations with a body or
 * a query, and the ones with path parameters only (get, embed, dismiss) need the same check.
 */
