/**
 * Schema inference: a draft JSON Schema (2020-12) and ui hints from real submission data. Pure and
 * deterministic: the same samples in the same order give the same draft. Only the top level is
 * inferred (nested objects are typed `object`, not walked), like drift detection.
 */

export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** A field's share of non-empty samples at or above which the draft requires it. */
export const REQUIRED_PRESENCE = 0.95;

const ENUM_MIN_SAMPLES = 5;
const ENUM_MAX_VALUES = 8;
/** Longer values are prose, never an enum member. */
const ENUM_MAX_LENGTH = 80;
const TEXTAREA_AVG_LENGTH = 80;
/** Longest ui key and label the publish contract takes. */
const UI_MAX = 200;

export interface InferredField {
  name: string;
  types: string[];
  presence: number;
  format?: string;
  enum?: string[];
}

export interface Inference {
  json_schema: Record<string, unknown>;
  ui: Record<string, Record<string, unknown>>;
  fields: InferredField[];
}

/** "full_name", "fullName", "full-name" → "Full name". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.\s]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : name;
}

const TYPE_ORDER = ['string', 'integer', 'number', 'boolean', 'array', 'object', 'null'];

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Seen types in a fixed order; integer folds into number when a fractional number was seen too. */
function normalizeTypes(seen: Set<string>): string[] {
  const out = TYPE_ORDER.filter((t) => seen.has(t));
  return out.includes('number') ? out.filter((t) => t !== 'integer') : out;
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '';

// Each check is a strict subset of what the validator (ajv-formats, full mode) accepts, so a
// published draft never rejects the samples it was inferred from.
const EMAIL =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;
const URI_CHARS = /^(?:[A-Za-z0-9\-._~:/?#@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;

function isDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(Date.UTC(y, mo - 1, d));
  // Round trip: 2024-02-30 would roll over to March.
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

function isDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m || !isDate(m[1])) return false;
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4]) > 59) return false;
  if (m[5] !== undefined && (Number(m[5]) > 23 || Number(m[6]) > 59)) return false;
  return !Number.isNaN(Date.parse(s));
}

function isHttpUrl(s: string): boolean {
  if (!URI_CHARS.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

const FORMATS: [string, (s: string) => boolean][] = [
  ['email', (s) => EMAIL.test(s)],
  ['date', isDate],
  ['date-time', isDateTime],
  ['uri', isHttpUrl],
];

/** The one format every string fits, if any. */
function formatOf(strings: string[]): string | undefined {
  if (!strings.length) return undefined;
  return FORMATS.find(([, fits]) => strings.every(fits))?.[0];
}

/** Attachment references are ids of the service, not user text. */
const isFileRef = (s: string) => s.startsWith('fl_');

interface Tally {
  name: string;
  types: Set<string>;
  present: number;
  blank: boolean;
  nulls: boolean;
  strings: string[];
  itemTypes: Set<string>;
  fileRefs: boolean;
}

function tally(samples: Record<string, unknown>[]): Tally[] {
  const byName = new Map<string, Tally>();
  for (const sample of samples) {
    for (const [name, value] of Object.entries(sample)) {
      let t = byName.get(name);
      if (!t) {
        t = {
          name,
          types: new Set(),
          present: 0,
          blank: false,
          nulls: false,
          strings: [],
          itemTypes: new Set(),
          fileRefs: false,
        };
        byName.set(name, t);
      }
      if (value === undefined) continue;
      t.types.add(jsonType(value));
      if (value === null) t.nulls = true;
      if (value === '') t.blank = true;
      if (isEmpty(value)) continue;
      t.present += 1;
      if (typeof value === 'string') {
        if (isFileRef(value)) t.fileRefs = true;
        else t.strings.push(value);
      }
      if (Array.isArray(value)) {
        for (const item of value) {
          t.itemTypes.add(jsonType(item));
          if (typeof item === 'string' && isFileRef(item)) t.fileRefs = true;
        }
      }
    }
  }
  return [...byName.values()];
}

/** A small closed set: enough samples, 2 to 8 distinct short values, each seen twice on average. */
function enumOf(t: Tally, types: string[]): string[] | undefined {
  const nonNull = types.filter((x) => x !== 'null');
  if (t.fileRefs || nonNull.length !== 1 || nonNull[0] !== 'string') return undefined;
  if (t.strings.length < ENUM_MIN_SAMPLES) return undefined;
  const distinct = [...new Set(t.strings)];
  // One repeated value is a default or a hidden field, not a choice.
  if (distinct.length < 2 || distinct.length > ENUM_MAX_VALUES || distinct.length * 2 > t.strings.length) {
    return undefined;
  }
  if (distinct.some((v) => v.length > ENUM_MAX_LENGTH || v.includes('\n'))) return undefined;
  return distinct;
}

function widgetOf(types: string[], format: string | undefined, values: string[] | undefined, t: Tally) {
  const nonNull = types.filter((x) => x !== 'null');
  if (nonNull.length !== 1) return undefined;
  const [type] = nonNull;
  if (type === 'boolean') return 'checkbox';
  if (type === 'integer' || type === 'number') return 'number';
  if (type !== 'string' || t.fileRefs) return undefined;
  if (values) return 'select';
  if (format === 'email') return 'email';
  if (format === 'uri') return 'url';
  if (format === 'date') return 'date';
  if (format) return undefined;
  const total = t.strings.reduce((n, s) => n + s.length, 0);
  if (t.strings.some((s) => s.includes('\n')) || (t.strings.length && total / t.strings.length > TEXTAREA_AVG_LENGTH)) {
    return 'textarea';
  }
  return undefined;
}

function propertyOf(t: Tally, types: string[], format: string | undefined, values: string[] | undefined) {
  const prop: Record<string, unknown> = {};
  if (types.length) prop.type = types.length === 1 ? types[0] : types;
  if (types.includes('array')) {
    const items = normalizeTypes(t.itemTypes);
    if (items.length === 1) prop.items = { type: items[0] };
  }
  if (values) {
    // Blank and null answers of an optional select stay valid.
    prop.enum = [...values, ...(t.blank ? [''] : []), ...(t.nulls ? [null] : [])];
  } else if (format) {
    // "" fails every format, and optional fields are often posted blank; null is not a string, so
    // the format branch already accepts it.
    if (t.blank) prop.anyOf = [{ format }, { const: '' }];
    else prop.format = format;
  }
  return prop;
}

/**
 * Infers a draft from submission data. Per field: the JSON types seen (integer when every number
 * was whole), presence (share of samples with a value other than undefined, null or ""; required
 * at >= 95 %), a format when every non-empty string fits it, a small enum when values repeat, and
 * ui hints (label, order: most present first, then by name, widget). The draft accepts every sample's values; only
 * `required` may reject the few samples (< 5 %) that lacked a field.
 */
export function inferSchema(samples: Record<string, unknown>[]): Inference {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const ui: Record<string, Record<string, unknown>> = {};
  const fields: InferredField[] = [];
  // Most present first, then by name: stored data (jsonb) does not keep the order a form sent its fields in.
  const tallies = tally(samples).sort(
    (a, b) => b.present - a.present || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  tallies.forEach((t, i) => {
    const types = normalizeTypes(t.types);
    const presence = samples.length ? t.present / samples.length : 0;
    const format = types.includes('string') && !t.fileRefs ? formatOf(t.strings) : undefined;
    // A format is the broader truth: a few repeated emails or dates are not a closed set.
    const values = format ? undefined : enumOf(t, types);
    properties[t.name] = propertyOf(t, types, format, values);
    if (presence >= REQUIRED_PRESENCE) required.push(t.name);
    const hint: Record<string, unknown> = { label: humanize(t.name).slice(0, UI_MAX), order: i + 1 };
    const widget = widgetOf(types, format, values, t);
    if (widget) hint.widget = widget;
    // The ui contract keys hints by names of at most 200 characters; a longer name goes without.
    if (t.name.length >= 1 && t.name.length <= UI_MAX) ui[t.name] = hint;
    fields.push({
      name: t.name,
      types,
      presence: Math.round(presence * 10_000) / 10_000,
      ...(format ? { format } : {}),
      ...(values ? { enum: values } : {}),
    });
  });
  return {
    json_schema: { $schema: DRAFT_2020_12, type: 'object', properties, required },
    ui,
    fields,
  };
}
