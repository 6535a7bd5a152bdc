import type { OutboundMessage } from './types.js';

type Obj = Record<string, unknown>;

/** `{{ path.to.value }}`: anything but braces inside, surrounding whitespace ignored. */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
/** Never walked, whatever the data holds: the way out of plain data into the prototype chain. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

const isPlainObject = (v: unknown): v is Obj => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * Looks a dotted path up over plain data: own properties of plain objects, and numeric indexes
 * of arrays. Anything else (a prototype key, a method, a class instance) is missing.
 */
function lookup(scope: Obj, path: string): unknown {
  const segments = path.split('.').map((s) => s.trim());
  let cur: unknown = scope;
  for (const seg of segments) {
    if (!seg || FORBIDDEN.has(seg)) return undefined;
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else if (isPlainObject(cur) && Object.hasOwn(cur, seg)) {
      cur = cur[seg];
    } else return undefined;
  }
  return cur;
}

/**
 * One value as text: strings as they are, numbers and booleans as text, arrays joined with ", ",
 * objects as JSON, nothing (null, missing, functions) as the empty string.
 */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return v.map((item) => (Array.isArray(item) ? safeJson(item) : formatValue(item))).join(', ');
  if (typeof v === 'object') return safeJson(v);
  return '';
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}

/**
 * Renders `{{ path }}` placeholders against `scope`. No expressions, helpers or loops: a
 * placeholder is a dotted path or nothing. `escape` is applied to every substituted value and
 * never to the template's own text (so a Telegram template may carry its own tags).
 */
export function renderTemplate(template: string, scope: Obj, escapeValue: (s: string) => string = (s) => s): string {
  return template.replace(PLACEHOLDER, (_m, inner: string) => escapeValue(formatValue(lookup(scope, inner.trim()))));
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML text and attribute escaping (& < > " '). */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** The fields of a submission as [name, value] text pairs, in the order they were sent. */
export function fieldEntries(data: Obj): [string, string][] {
  return Object.entries(data).map(([name, value]) => [name, formatValue(value)]);
}

/** The fields as "name: value" lines (file references stay their fl_ ids). */
export function formatFields(data: Obj): string {
  const lines = fieldEntries(data).map(([name, value]) => `${name}: ${value}`);
  return lines.length ? lines.join('\n') : '(no fields)';
}

/** What a delivery's templates see: form, submission, data and meta of the message. */
export function templateScope(ctx: OutboundMessage['context']): Obj {
  return {
    form: { id: ctx.form.id, slug: ctx.form.slug, name: ctx.form.name },
    submission: { ...(ctx.submission ?? {}) },
    data: ctx.data,
    meta: ctx.meta,
  };
}

/** The scope of one digest item (a listed submission), for templates applied per submission. */
export function itemScope(ctx: OutboundMessage['context'], item: Obj): Obj {
  const { data, meta, ...submission } = item;
  return {
    form: { id: ctx.form.id, slug: ctx.form.slug, name: ctx.form.name },
    submission,
    data: isPlainObject(data) ? data : {},
    meta: isPlainObject(meta) ? meta : {},
  };
}

/** A digest's listed submissions (each {id, received_at, data, meta, ...}). */
export function digestItems(ctx: OutboundMessage['context']): Obj[] {
  return (ctx.submissions ?? []).filter(isPlainObject);
}
