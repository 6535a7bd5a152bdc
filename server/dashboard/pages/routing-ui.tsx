import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { ERROR_CODES } from '../../../shared/errors.js';
import { ApiError } from '../../core/errors.js';
import { type NamedKind, namedChoices, namesOf as names } from '../../services/names.js';
import { FieldMessage, named } from '../components.js';
import type { DashEnv } from '../env.js';
import { issuesOf } from '../input.js';
import { type Issue, issuesAt } from './forms-ui.js';

/** Shared parts of the destination, route and delivery pages: field rendering and name look-ups. */

export type Values = Record<string, string>;

/** A posted form's fields as strings (a repeated name keeps its last value; files are ignored). */
export async function formValues(c: Context<DashEnv>): Promise<Values> {
  const body = await c.req.parseBody();
  const out: Values = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string' && k !== '_csrf') out[k] = v;
  return out;
}

/** The issues of a validation error (the API's `validation_failed`), or null for any other error. */
export function validationIssues(err: unknown): { message: string; hint?: string; issues: Issue[] } | null {
  if (!(err instanceof ApiError) || err.code !== 'validation_failed') return null;
  // The generic hint speaks of the API's details.issues; on a page the fields are marked instead.
  const hint = err.hint === ERROR_CODES.validation_failed.hint ? 'Fix the marked fields and send again.' : err.hint;
  return { message: err.message, hint, issues: issuesOf(err) };
}

/** A labelled input (or textarea) with its help and the errors of its body path next to it. */
export const Field: FC<{
  id: string;
  name: string;
  label: string;
  value?: string;
  path?: string;
  issues?: Issue[];
  type?: string;
  help?: string;
  required?: boolean;
  textarea?: boolean;
  placeholder?: string;
  autocomplete?: string;
}> = (p) => {
  const errs = p.path ? issuesAt(p.issues, p.path) : [];
  const described = [p.help ? `${p.id}-help` : '', errs.length ? `${p.id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id: p.id,
    name: p.name,
    required: p.required,
    placeholder: p.placeholder,
    autocomplete: p.autocomplete,
    'aria-invalid': errs.length ? 'true' : undefined,
    'aria-describedby': described || undefined,
  };
  return (
    <div class="field">
      <label for={p.id}>{p.label}</label>
      {p.help ? (
        <p class="help" id={`${p.id}-help`}>
          {p.help}
        </p>
      ) : null}
      {p.textarea ? (
        <textarea {...common} rows={4}>
          {p.value ?? ''}
        </textarea>
      ) : (
        <input type={p.type ?? 'text'} value={p.value ?? ''} {...common} />
      )}
      <FieldMessage id={`${p.id}-error`} message={errs} />
    </div>
  );
};

/** A checkbox with its label; a checkbox left unchecked is absent from the posted form. */
export const Check: FC<{ id: string; name: string; label: string; checked: boolean; help?: string }> = (p) => (
  <div class="field check">
    <label for={p.id}>
      <input type="checkbox" id={p.id} name={p.name} value="on" checked={p.checked} /> {p.label}
    </label>
    {p.help ? <p class="help">{p.help}</p> : null}
  </div>
);

/** id → name of the organization's rows among `ids` (the names service, for the session). */
export const namesOf = (c: Context<DashEnv>, kind: NamedKind, ids: Array<string | null | undefined>) =>
  names(c.var.deps, c.var.actor, kind, ids);

/** The choices of a select: the organization's forms (not sandboxes), streams or destinations by name. */
export const choices = (c: Context<DashEnv>, what: NamedKind, limit = 500) =>
  namedChoices(c.var.deps, c.var.actor, what, limit);

/** A select over named rows, with an optional "any" choice first. */
export const Choice: FC<{
  id: string;
  name: string;
  label: string;
  options: Array<{ id: string; name: string }>;
  value?: string;
  any?: string;
  issues?: Issue[];
  path?: string;
}> = (p) => {
  const errs = p.path ? issuesAt(p.issues, p.path) : [];
  return (
    <div class="field">
      <label for={p.id}>{p.label}</label>
      <select
        id={p.id}
        name={p.name}
        aria-invalid={errs.length ? 'true' : undefined}
        aria-describedby={errs.length ? `${p.id}-error` : undefined}
      >
        {p.any !== undefined ? <option value="">{p.any}</option> : null}
        {p.options.map((o) => (
          <option value={o.id} selected={o.id === p.value}>
            {o.name}
          </option>
        ))}
      </select>
      <FieldMessage id={`${p.id}-error`} message={errs} />
    </div>
  );
};

/** A list's filter by status: the select of `statuses`, "Any status" first. */
export const StatusFilter: FC<{ id: string; statuses: readonly string[]; value?: string }> = (p) => (
  <Choice id={p.id} name="status" label="Status" options={named(p.statuses)} value={p.value} any="Any status" />
);

/** The query string of `params` without empty values ("" when none). */
export function qs(params: Record<string, string | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : '';
}

/**
 * `allow` for any operation: input.ts's `allow` takes only operations with a body or a query in
 * its type, so operations with only path parameters (get, test, delete, retry) pass their scope here.
 */
