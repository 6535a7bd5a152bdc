/**
 * The fuzzer's own model of what intake stores, written from the spec and the documented limits
 * (not by calling the server's code): which bodies must be refused and with what status, and what
 * `data` a stored submission must read back as.
 */

export const LIMITS = { bodyBytes: 256 * 1024, fields: 500, depth: 16, keyLength: 256 };

/** Statuses a body may be refused with; empty = it must be accepted. */
export type Refusal = Set<400 | 413>;

/**
 * Walks a parsed body the way the Limits table reads: more than 500 fields (object keys plus array
 * items, over the whole body), nesting past 16 levels or a key longer than 256 → 413; NUL
 * characters (jsonb cannot hold them) and numbers outside the double range → 400.
 */
export function refusal(value: unknown, bodyBytes: number): Refusal {
  const out: Refusal = new Set();
  if (bodyBytes > LIMITS.bodyBytes) out.add(413);
  let fields = 0;
  const walk = (v: unknown, depth: number) => {
    if (depth > LIMITS.depth) out.add(413);
    if (typeof v === 'string') {
      if (v.includes('\u0000')) out.add(400);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) out.add(400);
    } else if (Array.isArray(v)) {
      fields += v.length;
      for (const x of v) walk(x, depth + 1);
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        fields += 1;
        if (k.length > LIMITS.keyLength) out.add(413);
        if (k.includes('\u0000')) out.add(400);
        walk(x, depth + 1);
      }
    }
  };
  walk(value, 0);
  if (fields > LIMITS.fields) out.add(413);
  return out;
}

/** Sets a key as an own property, `__proto__` included (a plain assignment would set the prototype). */
export function put(obj: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * What a value reads back as: strings and keys made well-formed (lone surrogates become U+FFFD, as
 * PostgreSQL cannot store them) and -0 as 0 (jsonb numbers have no sign of zero).
 */
export function normalize(v: unknown): unknown {
  if (typeof v === 'string') return v.toWellFormed();
  if (typeof v === 'number') return Object.is(v, -0) ? 0 : v;
  if (Array.isArray(v)) return v.map(normalize);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) put(out, k.toWellFormed(), normalize(x));
    return out;
  }
  return v;
}

/** What a file part's value reads back as in the fuzzers' models. */
export const FILE = '\u0000file';

const TRUE = new Set(['true', '1', 'on', 'yes']);
const filled = (s: unknown) => s !== undefined && s !== null && s !== '' && s !== false;
const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);

export interface ControlModel {
  data: Record<string, unknown>;
  test: boolean;
  honeypotFilled: boolean;
  idempotency: string | undefined;
}

/**
 * The spec's control fields: every top-level key starting with "_" is removed from data, and so are
 * the challenge token and the form's honeypot field. A repeated control field counts by its first
 * text value; the honeypot is filled when any of its values is.
 */
export function control(fields: Record<string, unknown>, honeypot: string): ControlModel {
  const data: Record<string, unknown> = {};
  const out: ControlModel = { data, test: false, honeypotFilled: false, idempotency: undefined };
  for (const [k, v] of Object.entries(fields)) {
    // A control field counts by its first text value: a file part under a control name sets nothing.
    const text = first(Array.isArray(v) ? v.filter((x) => x !== FILE) : v);
    if (k === honeypot) out.honeypotFilled = (Array.isArray(v) ? v : [v]).some(filled);
    else if (text === FILE) {
      // only files under this name
    } else if (k === '_test') out.test = text === true || (typeof text === 'string' && TRUE.has(text.toLowerCase()));
    else if (k === '_idempotency' && (typeof text === 'string' || typeof text === 'number'))
      out.idempotency = String(text);
    if (k === honeypot || k.startsWith('_') || k === 'cf-turnstile-response') continue;
    put(data, k, v);
  }
  return out;
}

/** Repeated names become arrays in order; a single one stays a scalar. */
export function group(pairs: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of pairs) {
    if (!Object.hasOwn(out, k)) put(out, k, v);
    else if (Array.isArray(out[k])) (out[k] as unknown[]).push(v);
    else put(out, k, [out[k], v]);
  }
  return out;
}

/** The idempotency key intake uses: the header when sent (even empty), else `_idempotency`; 255 chars. */
export function idempotencyKey(header: string | undefined, fromBody: string | undefined): string | null {
  return (header ?? fromBody)?.slice(0, 255) || null;
}
