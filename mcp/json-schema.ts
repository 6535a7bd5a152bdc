import { z } from 'zod';

/** A JSON Schema node (draft-07, as the SDK 1.x labels tool schemas). */
export type JsonSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  description?: string;
};

export const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/**
 * The input JSON Schema of a contract schema, with every `$ref` to a shared definition inlined:
 * MCP clients want a self-contained `type: "object"` at the root, and the registry's ids
 * (`.meta({id})`) would otherwise turn the root itself into a `$ref`. Plain JSON Schema objects
 * (the intake's "any object") pass through.
 */
export function inputSchemaOf(schema: unknown): JsonSchema {
  return schemaOf(schema, 'input');
}

/**
 * The output JSON Schema of a contract response schema, inlined as inputSchemaOf does. Objects are
 * left open (no `additionalProperties: false`): the contract's objects strip unknown keys rather
 * than refuse them, and a field the API adds later must not make a client's validation throw.
 */
export function outputSchemaOf(schema: unknown): JsonSchema {
  return open(schemaOf(schema, 'output'));
}

function schemaOf(schema: unknown, io: 'input' | 'output'): JsonSchema {
  if (!isZod(schema)) return structuredClone(schema as JsonSchema);
  const out = z.toJSONSchema(schema, { io, target: 'draft-07', unrepresentable: 'any' }) as JsonSchema;
  const defs = (out.definitions ?? {}) as Record<string, JsonSchema>;
  const { definitions: _d, $schema: _s, ...root } = out;
  return inline(root as JsonSchema, defs, []);
}

function open(node: JsonSchema): JsonSchema {
  if (Array.isArray(node)) return node.map(open) as unknown as JsonSchema;
  if (typeof node !== 'object' || node === null) return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'additionalProperties' && v === false) continue;
    out[k] = typeof v === 'object' && v !== null ? open(v as JsonSchema) : v;
  }
  return out;
}

function isZod(s: unknown): s is z.ZodType {
  return typeof s === 'object' && s !== null && '_zod' in s;
}

function inline(node: JsonSchema, defs: Record<string, JsonSchema>, seen: string[]): JsonSchema {
  if (Array.isArray(node)) return node.map((n) => inline(n, defs, seen)) as unknown as JsonSchema;
  if (typeof node !== 'object' || node === null) return node;
  const ref = typeof node.$ref === 'string' ? /^#\/definitions\/(.+)$/.exec(node.$ref)?.[1] : undefined;
  if (ref && defs[ref]) {
    // A recursive definition cannot be inlined; none exists in the contract today, so say so loudly.
    if (seen.includes(ref)) return { description: `recursive ${ref} (see the API's /openapi.json)` };
    const { $ref: _r, ...rest } = node;
    return inline({ ...defs[ref], ...rest }, defs, [...seen, ref]);
  }
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = typeof v === 'object' && v !== null ? inline(v as JsonSchema, defs, seen) : v;
  }
  return out;
}

/** The object variants of a body: itself, or the members of a top-level union of objects. */
export function objectVariants(schema: JsonSchema): JsonSchema[] | null {
  if (schema.type === 'object') return [schema];
  const members = schema.oneOf ?? schema.anyOf;
  if (members?.every((m) => m.type === 'object')) return members;
  return null;
}

/**
 * Several object schemas as one flat object: the union of their properties (a property the
 * variants type differently becomes an anyOf of the distinct types), required only where every
 * variant requires it. The API validates the exact shape; this tells the caller every field.
 */
export function flattenVariants(variants: JsonSchema[]): JsonSchema {
  const props: Record<string, JsonSchema[]> = {};
  for (const v of variants) {
    for (const [name, s] of Object.entries(v.properties ?? {})) {
      props[name] ??= [];
      if (!props[name].some((x) => JSON.stringify(x) === JSON.stringify(s))) props[name].push(s);
    }
  }
  const properties: Record<string, JsonSchema> = {};
  for (const [name, list] of Object.entries(props)) properties[name] = mergeAlternatives(list);
  const required = Object.keys(properties).filter((name) => variants.every((v) => v.required?.includes(name)));
  const open = variants.some((v) => v.additionalProperties !== false);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: open };
}

/** One schema for several: constants of one type fold into an enum, anything else into anyOf. */
function mergeAlternatives(list: JsonSchema[]): JsonSchema {
  if (list.length === 1) return list[0];
  if (list.every((s) => 'const' in s && s.type === list[0].type)) {
    return { type: list[0].type, enum: list.map((s) => s.const) };
  }
  return { anyOf: list };
}
