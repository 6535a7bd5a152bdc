/**
 * zod schema → oclif flags. Scalars become typed flags (string, number, integer, boolean, enum), and
 * a JSON object field (a record, e.g. a route's `match`) a flag that takes JSON; anything else
 * nested is left to `--data`. Flag names are the wire names in kebab-case
 * (`notify_email` → `--notify-email`); each flag remembers its wire name so values map back.
 */
import { Flags } from '@oclif/core';
import type { z } from '../shared/contracts/common.js';

export type ScalarKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';
export interface FieldSpec {
  wire: string;
  flag: string;
  kind: ScalarKind;
  options?: string[];
  description?: string;
  /** the field may be left out */
  optional?: boolean;
}

/** Wire names no operation may take as flags: the global ones and --data. */
export const RESERVED_FLAGS = new Set(['json', 'base-url', 'api-key', 'profile', 'data', 'help']);

interface Def {
  type: string;
  innerType?: ZodLike;
  in?: ZodLike;
  options?: ZodLike[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  shape?: Record<string, ZodLike>;
  checks?: Array<{ _zod?: { def?: { check?: string; format?: string } } }>;
  format?: string;
}
interface ZodLike {
  def: Def;
  description?: string;
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

export const kebab = (wire: string) => wire.replace(/_/g, '-');

function unwrap(s: ZodLike): { core: ZodLike; description?: string } {
  let description = s.description;
  let cur = s;
  for (;;) {
    const d = cur.def;
    if (WRAPPERS.has(d.type) && d.innerType) cur = d.innerType;
    else if (d.type === 'pipe' && d.in) cur = d.in;
    else break;
    description ??= cur.description;
  }
  return { core: cur, description };
}

function isOptional(s: ZodLike): boolean {
  for (let cur: ZodLike | undefined = s; cur; cur = cur.def.innerType) {
    if (cur.def.type === 'optional' || cur.def.type === 'default') return true;
    if (!WRAPPERS.has(cur.def.type)) return false;
  }
  return false;
}

function isInt(s: ZodLike): boolean {
  if (s.def.format === 'safeint' || s.def.format === 'int32') return true;
  return (s.def.checks ?? []).some((c) => ['safeint', 'int32', 'int64'].includes(c._zod?.def?.format ?? ''));
}

/** The scalar kind of a schema, or null when it is not a scalar. */
function scalarOf(s: ZodLike): Omit<FieldSpec, 'wire' | 'flag'> | null {
  const { core, description } = unwrap(s);
  const d = core.def;
  switch (d.type) {
    case 'string':
      return { kind: 'string', description };
    case 'number':
      return { kind: isInt(core) ? 'integer' : 'number', description };
    case 'boolean':
      return { kind: 'boolean', description };
    case 'record':
      return { kind: 'json', description };
    case 'enum':
      return { kind: 'enum', options: Object.values(d.entries ?? {}).map(String), description };
    case 'literal':
      return (d.values ?? []).every((v) => typeof v === 'string')
        ? { kind: 'enum', options: (d.values as string[]).slice(), description }
        : null;
    case 'union': {
      const parts = (d.options ?? []).map(scalarOf);
      if (!parts.length || parts.some((p) => p === null)) return null;
      if (parts.every((p) => p?.kind === 'enum')) {
        return { kind: 'enum', options: [...new Set(parts.flatMap((p) => p?.options ?? []))], description };
      }
      return { kind: 'string', description }; // e.g. string | number, a date or a timestamp: the server decides
    }
    default:
      return null;
  }
}

/** Object shapes of a schema: one for an object, one per option for a (discriminated) union of objects. */
function shapesOf(schema: unknown): Record<string, ZodLike>[] {
  if (!schema || typeof schema !== 'object' || !('def' in schema)) return [];
  const { core } = unwrap(schema as ZodLike);
  if (core.def.type === 'object' && core.def.shape) return [core.def.shape];
  if (core.def.type === 'union') return (core.def.options ?? []).flatMap(shapesOf);
  return [];
}

/**
 * The top-level scalar fields of an object schema (or of a union of objects, when every option
 * agrees on the field's kind; literals across options merge into one enum, e.g. `type`).
 */
export function scalarFields(schema: z.ZodType | unknown): FieldSpec[] {
  const shapes = shapesOf(schema);
  const byWire = new Map<string, Array<Omit<FieldSpec, 'wire' | 'flag'> | null>>();
  for (const shape of shapes) {
    for (const [wire, field] of Object.entries(shape)) {
      byWire.set(wire, [...(byWire.get(wire) ?? []), scalarOf(field)]);
    }
  }
  const out: FieldSpec[] = [];
  for (const [wire, specs] of byWire) {
    if (specs.some((s) => s === null)) continue;
    const all = specs as Omit<FieldSpec, 'wire' | 'flag'>[];
    const kinds = new Set(all.map((s) => s.kind));
    if (kinds.size !== 1) continue;
    const first = all[0];
    const options = first.kind === 'enum' ? [...new Set(all.flatMap((s) => s.options ?? []))] : undefined;
    const description = all.find((s) => s.description)?.description;
    const optional = shapes.some((shape) => !shape[wire] || isOptional(shape[wire]));
    out.push({ wire, flag: kebab(wire), kind: first.kind, options, description, optional });
  }
  return out.filter((f) => !RESERVED_FLAGS.has(f.flag));
}

const num = (integer: boolean) => async (input: string) => {
  const n = Number(input);
  if (input.trim() === '' || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new Error(`expects ${integer ? 'an integer' : 'a number'}, got "${input}"`);
  }
  return n;
};

/** A JSON object flag's value ('null' clears the field where the API allows it). */
async function jsonObject(input: string) {
  let v: unknown;
  try {
    v = JSON.parse(input);
  } catch (err) {
    throw new Error(`expects a JSON object, e.g. '{"data.topic": "sales"}': ${(err as Error).message}`);
  }
  if (v !== null && (typeof v !== 'object' || Array.isArray(v))) throw new Error('expects a JSON object (or null)');
  return v as Record<string, unknown> | null;
}

/** One oclif flag for a field. Booleans take --x / --no-x. */
export function flagFor(f: FieldSpec, extra = '') {
  const description = [f.description, extra].filter(Boolean).join(' ') || undefined;
  switch (f.kind) {
    case 'boolean':
      return Flags.boolean({ description, allowNo: true });
    case 'integer':
    case 'number':
      return Flags.custom<number>({ description, parse: num(f.kind === 'integer'), helpValue: `<${f.kind}>` })();
    case 'enum':
      return Flags.option({ description, options: f.options as readonly string[] })();
    case 'json':
      return Flags.custom<Record<string, unknown> | null>({ description, parse: jsonObject, helpValue: "'<json>'" })();
    default:
      return Flags.string({ description });
  }
}

/** An example value for a field, for generated examples. */
export function exampleValue(f: FieldSpec): string {
  if (f.kind === 'enum') return f.options?.[0] ?? 'value';
  if (f.kind === 'integer' || f.kind === 'number') return '10';
  if (f.kind === 'json') return `'{}'`;
  if (f.wire === 'name') return 'Contact';
  if (f.wire.endsWith('email')) return 'you@example.com';
  if (f.wire.endsWith('url')) return 'https://example.com/hook';
  return `<${f.wire}>`;
}
