/**
 * Form-encoded bodies (urlencoded, multipart) carry only strings. Before validation intake turns
 * each value into the scalar type the current schema declares for its field, and normalises what
 * the embed's own widgets post, so that a browser filling the embed is received with typed data.
 * JSON bodies carry their own types and never come here.
 *
 * The rules are read once per schema version (`fieldRules`, kept in intake's form cache) and
 * applied per request with a lookup per field: no schema walking on the hot path.
 */

import { isObj, type Obj } from '../../shared/objects.js';
import { setOwn } from './parse.js';

type Scalar = 'integer' | 'number' | 'boolean';

export interface FieldRule {
  /** scalar types a string may become, tried in this order; empty: the field keeps its strings */
  to: Scalar[];
  /** the field is an array: a lone value becomes a one-item array, and each item is converted */
  array: boolean;
  /** string date-time: a datetime-local value ("2026-11-25T10:30") or a date becomes RFC 3339 in the org's zone */
  dateTime: boolean;
  /** optional, and "" is no valid value: a blank control posts it, and it is left out of the data */
  dropEmpty: boolean;
}

export type FieldRules = ReadonlyMap<string, FieldRule>;

const ORDER: Scalar[] = ['integer', 'number', 'boolean'];

function declaredTypes(prop: Obj): string[] {
  const own = ([] as unknown[]).concat(prop.type ?? []).filter((t): t is string => typeof t === 'string');
  if (own.length) return own;
  // An enum or const without a type: the types of its members (a select of numbers posts "2").
  const members = Array.isArray(prop.enum) ? prop.enum : 'const' in prop ? [prop.const] : [];
  return [...new Set(members.map((m) => (m === null ? 'null' : typeof m === 'number' ? 'number' : typeof m)))];
}

/** format, or the format of an anyOf/oneOf branch (inferred drafts write `anyOf [{format}, {const: ""}]`). */
function formatOf(prop: Obj): string | undefined {
  if (typeof prop.format === 'string') return prop.format;
  for (const key of ['anyOf', 'oneOf']) {
    const branches = prop[key];
    if (!Array.isArray(branches)) continue;
    const found = branches.find((b) => isObj(b) && typeof b.format === 'string') as Obj | undefined;
    if (found) return found.format as string;
  }
  return undefined;
}

const scalarsOf = (types: string[]): Scalar[] =>
  types.includes('string') ? [] : ORDER.filter((t) => types.includes(t));

/** Whether "" certainly fails the property: a non-string type, a format of its own, minLength, an enum without "". */
function emptyInvalid(prop: Obj, types: string[]): boolean {
  if (types.length && !types.includes('string')) return true;
  if (typeof prop.format === 'string') return true;
  if (typeof prop.minLength === 'number' && prop.minLength >= 1) return true;
  if (Array.isArray(prop.enum) && !prop.enum.includes('')) return true;
  return false;
}

/**
 * The conversion rule of each top-level property that needs one. Only what a form field can be:
 * properties of the root (nested objects never come from a flat form body), a `$ref` left as is.
 */
export function fieldRules(jsonSchema: unknown): FieldRules {
  const rules = new Map<string, FieldRule>();
  if (!isObj(jsonSchema) || !isObj(jsonSchema.properties)) return rules;
  const required = new Set(Array.isArray(jsonSchema.required) ? jsonSchema.required : []);
  for (const [name, raw] of Object.entries(jsonSchema.properties)) {
    if (!isObj(raw)) continue;
    const types = declaredTypes(raw);
    const array = types.includes('array') && !types.includes('string');
    const items = array && isObj(raw.items) ? raw.items : null;
    const target = items ?? raw;
    const rule: FieldRule = {
      to: array ? (items ? scalarsOf(declaredTypes(items)) : []) : scalarsOf(types),
      array,
      dateTime: formatOf(target) === 'date-time',
      dropEmpty: !required.has(name) && emptyInvalid(raw, types),
    };
    if (rule.to.length || rule.array || rule.dateTime || rule.dropEmpty) rules.set(name, rule);
  }
  return rules;
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'on', '1']);
const FALSE = new Set(['false', 'off', '0']);

/** One string as the first scalar type it reads as; undefined when it reads as none (left as sent). */
function asScalar(s: string, to: Scalar[]): number | boolean | undefined {
  const t = s.trim();
  for (const type of to) {
    if (type === 'boolean') {
      const lower = t.toLowerCase();
      if (TRUE.has(lower)) return true;
      if (FALSE.has(lower)) return false;
    } else if (NUMBER.test(t)) {
      const n = Number(t);
      // An integer past 2^53 would be stored as another number: keep the string, validation says why.
      if (type === 'integer' ? Number.isSafeInteger(n) : Number.isFinite(n)) return n;
    }
  }
  return undefined;
}

/** One value of a field by its rule; anything that does not convert stays as sent. */
function convert(v: unknown, rule: FieldRule, zone: string): unknown {
  if (typeof v !== 'string') return v;
  if (rule.to.length) return asScalar(v, rule.to) ?? v;
  if (rule.dateTime) return zonedDateTime(v, zone) ?? v;
  return v;
}

/**
 * The data of a form-encoded post with each field converted by its rule (see FieldRule), in the
 * organization's time zone. Fields without a rule, and values that do not convert, stay as sent:
 * validation then names them, and nothing the visitor sent is lost.
 */
export function coerceFormData(data: Record<string, unknown>, rules: FieldRules, zone: string) {
  if (!rules.size) return data;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(data)) {
    const rule = rules.get(name);
    if (!rule) {
      setOwn(out, name, value);
      continue;
    }
    if (rule.dropEmpty && (value === '' || (Array.isArray(value) && value.every((x) => x === '')))) continue;
    // A lone value of an array field (one box of a group ticked) is a one-item array.
    const each = Array.isArray(value) || rule.array;
    const items = Array.isArray(value) ? value : [value];
    const converted = items.map((x) => convert(x, rule, zone));
    setOwn(out, name, each ? converted : converted[0]);
  }
  return out;
}

/**
 * What `<input type="datetime-local">` posts: a wall-clock time without an offset; a date alone (a
 * date widget on a date-time field) is the start of that day.
 */
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?$/;
const zoneFormats = new Map<string, Intl.DateTimeFormat | null>();

function zoneFormat(zone: string): Intl.DateTimeFormat | null {
  let f = zoneFormats.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      });
    } catch {
      f = null;
    }
    zoneFormats.set(zone, f);
  }
  return f;
}

/** Milliseconds the zone is ahead of UTC at an instant. */
function offsetAt(f: Intl.DateTimeFormat, at: number): number {
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(new Date(at))) p[part.type] = part.value;
  const year = p.era === 'BC' ? 1 - Number(p.year) : Number(p.year);
  const wall = utc(year, Number(p.month), Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return wall - Math.floor(at / 1000) * 1000;
}

/** Date.UTC for any year (Date.UTC reads 0..99 as 1900..1999). */
function utc(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  date.setUTCFullYear(y);
  return date.getTime();
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

/**
 * A datetime-local value read in the zone, as RFC 3339 with the zone's offset at that instant
 * ("2026-11-25T10:30" in Europe/Berlin → "2026-11-25T10:30:00+01:00"). A wall time the zone skips
 * (a DST gap) lands on the instant after it. Null when the value is no datetime-local value or no
 * real date (February 30th).
 */
export function zonedDateTime(value: string, zone: string): string | null {
  const m = LOCAL.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number);
  const wall = utc(y, mo, d, h, mi, s);
  const check = new Date(wall);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return null;
  const f = zoneFormat(zone) ?? zoneFormat('UTC');
  if (!f) return null;
  // Two passes find the instant whose wall time in the zone is `wall`, across an offset change.
  const first = offsetAt(f, wall);
  let at = wall - first;
  const second = offsetAt(f, at);
  if (second !== first) at = wall - second;
  const offset = offsetAt(f, at);
  const frac = m[7] ?? '';
  // Offsets RFC 3339 cannot write (whole seconds, before standard time): the instant in UTC.
  const minutes = offset / 60_000;
  const shown = Number.isInteger(minutes) ? at + offset : at;
  const local = new Date(shown);
  const date = `${local.getUTCFullYear() < 0 ? '-' : ''}${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
  const time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}${frac}`;
  if (!Number.isInteger(minutes) || minutes === 0) return `${date}T${time}Z`;
  return `${date}T${time}${minutes < 0 ? '-' : '+'}${pad(Math.trunc(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}
