import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { ApiError } from '../core/errors.js';
import { PATTERN_BUDGET_MS, tenantRegExpEngine, withPatternBudget } from './patterns.js';

export interface SchemaIssue {
  path: string;
  message: string;
}

export interface ValidationResult {
  valid: boolean;
  issues: SchemaIssue[];
}

/** Issues kept per submission: enough to fix the form, bounded so one bad post stays small. */
const MAX_ISSUES = 50;
/** Compiled validators kept in memory, least recently used first out. */
const CACHE_SIZE = 500;

// One instance for every tenant. Nothing is ever fetched: compile() is synchronous and there is no
// loadSchema. addUsedSchema:false keeps a tenant's $id out of the shared registry; compileOrThrow
// also drops whatever a compile registered, so one tenant's $id never resolves in another's schema.
// Tenant patterns are guarded (patterns.ts): no visitor's value can make one hold the event loop.
// ajv (about 2 MB) is required at the first compile, synchronously: a server whose forms publish
// no schema never loads it.
let shared: Ajv2020 | undefined;
function ajvInstance(): Ajv2020 {
  if (shared) return shared;
  const require = createRequire(import.meta.url);
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;
  shared = new Ajv({
    strict: false,
    strictTuples: false,
    allErrors: true,
    addUsedSchema: false,
    code: { regExp: tenantRegExpEngine },
  });
  addFormats.default(shared);
  return shared;
}

const cache = new Map<string, ValidateFunction>();
const JSON_TYPES = new Set<unknown>(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

const invalidSchema = (message: string, issues: SchemaIssue[]) =>
  new ApiError('validation_failed', message, {
    hint: 'Fix json_schema (JSON Schema draft 2020-12, object root, local $refs only under $defs) and publish again.',
    details: { issues },
  });

/** $ref / $dynamicRef values that point outside the document (an absolute URI no $id inside declares). */
function remoteRefs(root: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  const refs: string[] = [];
  // Iterative walk: a deeply nested schema must not overflow the stack.
  const stack: unknown[] = [root];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === '$id' && typeof v === 'string') ids.add(v.replace(/#$/, ''));
      else if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string') refs.push(v);
      else if (v && typeof v === 'object') stack.push(v);
    }
  }
  return refs.filter((ref) => {
    const base = ref.split('#')[0];
    return /^[a-z][a-z0-9+.-]*:/i.test(base) && !ids.has(base);
  });
}

/**
 * Compiles a tenant schema (draft 2020-12 plus formats). A schema that does not compile, is not a
 * JSON object, types its root as something other than an object, or references a remote document answers 422 validation_failed carrying the
 * compiler's message in details.issues.
 */
export function compileOrThrow(jsonSchema: unknown): ValidateFunction {
  if (!jsonSchema || typeof jsonSchema !== 'object' || Array.isArray(jsonSchema)) {
    throw invalidSchema('json_schema must be a JSON object.', [{ path: 'json_schema', message: 'must be an object' }]);
  }
  const schema = jsonSchema as Record<string, unknown>;
  // Submissions and mapped stream records are always objects: a root typed otherwise rejects everything.
  // (An unknown type name is left to the compiler, whose message says what is allowed.)
  const rootTypes = ([] as unknown[]).concat(schema.type ?? []);
  if (rootTypes.length && rootTypes.every((x) => JSON_TYPES.has(x)) && !rootTypes.includes('object')) {
    throw invalidSchema('json_schema must describe an object: submissions are JSON objects.', [
      { path: 'json_schema.type', message: `is ${JSON.stringify(schema.type)}; use "object" or leave type out` },
    ]);
  }
  const remote = remoteRefs(schema);
  if (remote.length) {
    throw invalidSchema(
      'json_schema references documents outside itself; they are never fetched.',
      remote.map((ref) => ({ path: 'json_schema', message: `remote $ref ${ref}: inline it under $defs` })),
    );
  }
  const ajv = ajvInstance();
  const refsBefore = new Set(Object.keys(ajv.refs));
  const schemasBefore = new Set(Object.keys(ajv.schemas));
  try {
    return ajv.compile(schema);
  } catch (err) {
    // A stack overflow is a schema nesting too deep or a $ref chain that never reaches a schema.
    const message =
      err instanceof RangeError
        ? 'it nests too deeply or its $refs loop without reaching a schema'
        : (err as Error).message;
    throw invalidSchema(`json_schema does not compile: ${message}`, [{ path: 'json_schema', message }]);
  } finally {
    ajv.removeSchema(schema);
    for (const key of Object.keys(ajv.refs)) if (!refsBefore.has(key)) delete ajv.refs[key];
    for (const key of Object.keys(ajv.schemas)) if (!schemasBefore.has(key)) delete ajv.schemas[key];
  }
}

/** Keeps a validator compiled at publish time, so the first submission does not compile it again. */
export function rememberValidator(formId: string, version: number, validate: ValidateFunction): void {
  const key = `${formId}:${version}`;
  cache.delete(key);
  cache.set(key, validate);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
}

/** The compiled validator of one (form, version); versions are immutable, so the cache never goes stale. */
function validatorFor(formId: string, version: number, jsonSchema: unknown): ValidateFunction {
  const key = `${formId}:${version}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const compiled = compileOrThrow(jsonSchema);
  rememberValidator(formId, version, compiled);
  return compiled;
}

/** An ajv error → {path, message}; path is dotted ("items.2.email"), "(data)" for the root. */
function issueOf(e: ErrorObject): SchemaIssue {
  const segments = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  const extra = params.missingProperty ?? params.additionalProperty;
  if (extra !== undefined) segments.push(extra);
  return { path: segments.join('.') || '(data)', message: e.message ?? e.keyword };
}

/** Validates submission data against one schema version; issues are bounded to the first 50. */
export function validateData(formId: string, version: number, jsonSchema: unknown, data: unknown): ValidationResult {
  const validate = validatorFor(formId, version, jsonSchema);
  if (withPatternBudget(PATTERN_BUDGET_MS, () => validate(data))) return { valid: true, issues: [] };
  return { valid: false, issues: (validate.errors ?? []).slice(0, MAX_ISSUES).map(issueOf) };
}
