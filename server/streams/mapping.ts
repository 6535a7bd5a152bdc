/**
 * Stream mappings, pure: checking an entry's shape, what a mapping leaves uncovered in a stream
 * schema, and applying one to a submission's data. A mapping is keyed by stream field; each entry
 * has exactly one of `from` (form field), `const` (fixed value) or `expr` (reserved) plus an
 * optional `default`.
 */

import { isObj } from '../../shared/objects.js';
import { ApiError } from '../core/errors.js';

export type MappingEntry = { from?: string; const?: unknown; expr?: string; default?: unknown };
export type Mapping = Record<string, MappingEntry>;

/** The top-level properties a schema declares (empty when it declares none). */
export function declaredFields(jsonSchema: unknown): string[] {
  return isObj(jsonSchema) && isObj(jsonSchema.properties) ? Object.keys(jsonSchema.properties) : [];
}

export function requiredFields(jsonSchema: unknown): string[] {
  if (!isObj(jsonSchema) || !Array.isArray(jsonSchema.required)) return [];
  return jsonSchema.required.filter((r): r is string => typeof r === 'string');
}

/**
 * Refuses what no schema version can make right: `expr` (422 expressions_not_enabled), entries with
 * none or several of from/const/expr, mapping keys the stream schema does not declare and `from`
 * fields the form's schema does not declare (validation_failed, all issues at once). `path` prefixes
 * issue paths, e.g. "sources[0].mapping".
 */
export function checkMapping(mapping: Mapping, streamSchema: unknown, formFields: string[] | null, path: string): void {
  const exprAt = Object.keys(mapping).find((k) => mapping[k].expr !== undefined);
  if (exprAt !== undefined) {
    throw new ApiError(
      'expressions_not_enabled',
      `Mapping expressions are reserved and not evaluated (${path}.${exprAt}).`,
      {
        hint: 'Map the field with from (a form field), const (a fixed value) or default instead of expr.',
        details: { path: `${path}.${exprAt}.expr` },
      },
    );
  }
  const issues: { path: string; message: string }[] = [];
  const streamFields = new Set(declaredFields(streamSchema));
  const formSet = formFields?.length ? new Set(formFields) : null;
  for (const [key, entry] of Object.entries(mapping)) {
    const kinds = (['from', 'const'] as const).filter((k) => k in entry && entry[k] !== undefined);
    if (kinds.length !== 1) {
      issues.push({ path: `${path}.${key}`, message: 'needs exactly one of from, const or expr' });
    }
    if (streamFields.size && !streamFields.has(key)) {
      issues.push({ path: `${path}.${key}`, message: `the stream schema declares no field "${key}"` });
    }
    if (entry.from !== undefined && formSet && !formSet.has(entry.from)) {
      issues.push({
        path: `${path}.${key}.from`,
        message: `the form's current schema declares no field "${entry.from}"`,
      });
    }
  }
  if (issues.length) {
    throw new ApiError('validation_failed', 'The mapping is invalid.', {
      hint:
        'Key the mapping by stream fields (GET /v1/streams/{id}/schema lists them) and give each entry exactly one ' +
        'of from or const; from names a field the form sends.',
      details: { issues },
    });
  }
}

/** Required stream fields no entry covers: what makes a mapping `incomplete`. */
export function missingFields(mapping: Mapping, streamSchema: unknown): string[] {
  return requiredFields(streamSchema).filter((f) => !(f in mapping));
}

export function mappingStatus(missing: string[]): 'valid' | 'incomplete' {
  return missing.length ? 'incomplete' : 'valid';
}

/**
 * A mapping that takes every stream field from the form field of the same name (only the fields
 * the form's schema declares, when it declares any).
 */
export function identityMapping(streamSchema: unknown, formFields: string[] | null): Mapping {
  const formSet = formFields?.length ? new Set(formFields) : null;
  return Object.fromEntries(
    declaredFields(streamSchema)
      .filter((f) => !formSet || formSet.has(f))
      .map((f) => [f, { from: f }]),
  );
}

const absent = (v: unknown) => v === undefined || v === null || v === '';

/**
 * Maps submission data: `data` holds one key per entry that yields a value (from the field, the
 * const, or the default when the field is absent, null or ""); `extras` holds the form fields no
 * `from` reads.
 */
export function applyMapping(mapping: Mapping, input: Record<string, unknown>) {
  const data: Record<string, unknown> = {};
  const used = new Set<string>();
  for (const [key, entry] of Object.entries(mapping)) {
    if (entry.from !== undefined) {
      used.add(entry.from);
      const value = Object.hasOwn(input, entry.from) ? input[entry.from] : undefined;
      if (!absent(value)) data[key] = value;
      else if (entry.default !== undefined) data[key] = entry.default;
      else if (value !== undefined) data[key] = value;
    } else if (entry.const !== undefined) {
      data[key] = entry.const;
    } else if (entry.default !== undefined) {
      data[key] = entry.default;
    }
  }
  const extras = Object.fromEntries(Object.entries(input).filter(([k]) => !used.has(k)));
  return { data, extras };
}

/** `tag:<tag>` or `project:<id>`, split; null for anything else. */
export function parseSelector(selector: string): { kind: 'tag' | 'project'; value: string } | null {
  const m = /^(tag|project):(.+)$/.exec(selector);
  return m ? { kind: m[1] as 'tag' | 'project', value: m[2] } : null;
}

/** The selectors a form matches: one per tag and its project. */
export function selectorsOf(form: { tags: string[]; projectId: string }): string[] {
  return [...form.tags.map((t) => `tag:${t}`), `project:${form.projectId}`];
}

/**
 * Of the sources, the one that applies to each form: an explicit form_id source wins over
 * selectors; among selectors the oldest.
 */
export function pickSource<S extends { id: string; formId: string | null; selector: string | null }>(
  sources: S[],
  form: { id: string; tags: string[]; projectId: string },
): S | undefined {
  const explicit = sources.find((s) => s.formId === form.id);
  if (explicit) return explicit;
  const selectors = new Set(selectorsOf(form));
  return sources
    .filter((s) => s.selector !== null && selectors.has(s.selector))
    .sort((a, b) => (a.id < b.id ? -1 : 1))[0];
}
