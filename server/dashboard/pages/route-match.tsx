import type { FC } from 'hono/jsx';
import { FieldMessage } from '../components.js';
import type { Issue } from './forms-ui.js';
import type { Values } from './routing-ui.js';

/**
 * The route form's condition builder (a route's `match`, docs/routing-conditions.md): rows of
 * field, operator and value joined by "all" or "any", plus a JSON box for anything the rows cannot
 * say. Plain form fields, no script: a few empty rows are always shown (empty ones are ignored),
 * and saving a condition shows one more.
 */

const OPS = [
  ['$eq', 'equals'],
  ['$ne', 'does not equal'],
  ['$in', 'is one of (comma-separated)'],
  ['$nin', 'is none of (comma-separated)'],
  ['$contains', 'contains'],
  ['$gt', 'is greater than'],
  ['$gte', 'is at least'],
  ['$lt', 'is less than'],
  ['$lte', 'is at most'],
  ['$exists', 'is present'],
  ['$absent', 'is absent'],
] as const;
const OP_NAMES = new Set<string>(OPS.map(([op]) => op));

const MIN_ROWS = 3;
const MAX_ROWS = 10;

interface Row {
  field: string;
  op: string;
  value: string;
}

/** A typed value: numbers, true/false and null as JSON, anything else as the text typed. */
function typed(text: string): unknown {
  const v = text.trim();
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (v === 'true' || v === 'false') return v === 'true';
  if (v === 'null') return null;
  return v;
}

/** One row as a condition; a bare path means data.<path>. */
function rowCondition(r: Row): Record<string, unknown> {
  const path = /^(data|meta|submission)\./.test(r.field) ? r.field : `data.${r.field}`;
  const list = () => r.value.split(',').map((x) => typed(x));
  switch (r.op) {
    case '$exists':
      return { [path]: { $exists: true } };
    case '$absent':
      return { [path]: { $exists: false } };
    case '$in':
    case '$nin':
      return { [path]: { [r.op]: list() } };
    case '$contains':
      return { [path]: { $contains: r.value.trim() } };
    case '$eq':
      return { [path]: typed(r.value) };
    default:
      return { [path]: { [r.op]: typed(r.value) } };
  }
}

function rowsOf(v: Values): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < MAX_ROWS; i += 1) {
    const field = v[`m_field_${i}`]?.trim() ?? '';
    if (field) rows.push({ field, op: v[`m_op_${i}`] ?? '$eq', value: v[`m_value_${i}`] ?? '' });
  }
  return rows;
}

/**
 * The posted condition: the JSON box when filled (parsed; text that is no JSON is passed on as is,
 * so the API's 422 names it), else the rows joined by all ($and) or any ($or); null when empty.
 */
export function matchFromForm(v: Values): unknown {
  const json = v.match_json?.trim();
  if (json) {
    try {
      return JSON.parse(json);
    } catch {
      return json;
    }
  }
  const conds = rowsOf(v).map(rowCondition);
  if (!conds.length) return null;
  if (conds.length === 1) return conds[0];
  return { [v.m_join === 'any' ? '$or' : '$and']: conds };
}

/** A single-field, single-operator condition as a row, or null when the rows cannot show it. */
function rowFrom(cond: unknown): Row | null {
  if (!cond || typeof cond !== 'object' || Array.isArray(cond)) return null;
  const entries = Object.entries(cond);
  if (entries.length !== 1) return null;
  const [field, arg] = entries[0];
  if (field.startsWith('$')) return null;
  const text = (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x));
  if (!arg || typeof arg !== 'object') return { field, op: '$eq', value: text(arg) };
  const ops = Object.entries(arg);
  if (Array.isArray(arg) || ops.length !== 1) return null;
  const [op, value] = ops[0];
  if (op === '$exists') return { field, op: value ? '$exists' : '$absent', value: '' };
  if (!OP_NAMES.has(op)) return null;
  if (Array.isArray(value))
    return op === '$in' || op === '$nin' ? { field, op, value: value.map(text).join(', ') } : null;
  return value !== null && typeof value === 'object' ? null : { field, op, value: text(value) };
}

/** A stored condition as the form's values: rows where it fits them, else the JSON box. */
export function matchValues(match: unknown): Values {
  if (match === null || match === undefined) return {};
  const obj = match as Record<string, unknown>;
  const join = Object.keys(obj).length === 1 ? (obj.$and ? 'all' : obj.$or ? 'any' : null) : null;
  const parts = join ? (obj.$and ?? obj.$or) : [match];
  const rows = Array.isArray(parts) ? parts.map(rowFrom) : [null];
  if (rows.some((r) => r === null) || rows.length > MAX_ROWS - 1) return { match_json: JSON.stringify(match, null, 2) };
  const out: Values = { m_join: join ?? 'all' };
  (rows as Row[]).forEach((r, i) => {
    out[`m_field_${i}`] = r.field;
    out[`m_op_${i}`] = r.op;
    out[`m_value_${i}`] = r.value;
  });
  return out;
}

const ConditionRow: FC<{ i: number; v: Values }> = ({ i, v }) => (
  <fieldset class="match-row">
    <legend>{`Row ${i + 1}`}</legend>
    <label for={`m-field-${i}`}>Field</label>
    <input
      id={`m-field-${i}`}
      name={`m_field_${i}`}
      value={v[`m_field_${i}`] ?? ''}
      placeholder={i === 0 ? 'topic (or data.topic, meta.origin)' : ''}
    />
    <label for={`m-op-${i}`}>Operator</label>
    <select id={`m-op-${i}`} name={`m_op_${i}`}>
      {OPS.map(([op, label]) => (
        <option value={op} selected={(v[`m_op_${i}`] ?? '$eq') === op}>
          {label}
        </option>
      ))}
    </select>
    <label for={`m-value-${i}`}>Value</label>
    <input id={`m-value-${i}`} name={`m_value_${i}`} value={v[`m_value_${i}`] ?? ''} />
  </fieldset>
);

/** The condition fieldset of the route form; errors of `match…` paths are shown under it. */
export const MatchFields: FC<{ v: Values; issues?: Issue[] }> = ({ v, issues }) => {
  const used = rowsOf(v).length;
  const shown = Math.min(MAX_ROWS, Math.max(MIN_ROWS, used + 1));
  const errs = (issues ?? []).filter((i) => i.path === 'match' || i.path.startsWith('match.'));
  return (
    <fieldset>
      <legend>Condition (optional)</legend>
      <p class="help">
        Deliver only the submissions that meet it; the others are logged as skipped (match). A field is a form field's
        name, or a path such as data.address.country, meta.origin, submission.test. Leave every row empty to deliver
        all.
      </p>
      <div class="field">
        <label for="m-join">Join the rows</label>
        <select id="m-join" name="m_join">
          <option value="all" selected={v.m_join !== 'any'}>
            all must hold
          </option>
          <option value="any" selected={v.m_join === 'any'}>
            any may hold
          </option>
        </select>
      </div>
      {Array.from({ length: shown }, (_, i) => (
        <ConditionRow i={i} v={v} />
      ))}
      <div class="field">
        <label for="route-match-json">Advanced: the condition as JSON (used instead of the rows when filled)</label>
        <textarea id="route-match-json" name="match_json" rows={4} aria-invalid={errs.length ? 'true' : undefined}>
          {v.match_json ?? ''}
        </textarea>
      </div>
      <FieldMessage id="route-match-error" message={errs.map((e) => ({ message: `${e.path}: ${e.message}` }))} />
    </fieldset>
  );
};
