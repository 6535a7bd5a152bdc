/**
 * Text output for people (JSON is the default for everyone else): a list is one line per item,
 * an object is `key: value` lines with nested values as compact JSON.
 */
import type { ApiErrorBody } from '../shared/client.js';

const LIST_KEYS = ['id', 'name', 'status', 'type', 'slug', 'email', 'form_id', 'created_at', 'received_at'];

const scalar = (v: unknown) =>
  v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);

function line(item: unknown): string {
  if (!item || typeof item !== 'object') return scalar(item);
  const o = item as Record<string, unknown>;
  const keys = LIST_KEYS.filter((k) => k in o);
  return (keys.length ? keys : Object.keys(o).slice(0, 4)).map((k) => scalar(o[k])).join('  ');
}

/** Human text for an API answer. */
export function toText(data: unknown): string {
  if (data === null || data === undefined) return 'OK';
  if (typeof data === 'string') return data.replace(/\n$/, '');
  if (Array.isArray(data)) return data.length ? data.map(line).join('\n') : '(none)';
  if (typeof data !== 'object') return String(data);
  const o = data as Record<string, unknown>;
  if (Array.isArray(o.data) && 'next_cursor' in o) {
    const body = o.data.length ? o.data.map(line).join('\n') : '(none)';
    return o.next_cursor ? `${body}\nmore: --cursor ${o.next_cursor}` : body;
  }
  return Object.entries(o)
    .map(([k, v]) => `${k}: ${scalar(v)}`)
    .join('\n');
}

/** An API error as text: the API's message, then its hint. Synthetic errors stay on one line. */
export function errorText(e: ApiErrorBody, requestId?: string | null): string {
  if (e.code === 'network_error' || e.code === 'bad_response') return `Error: ${e.message} ${e.hint ?? ''}`.trim();
  const out = [`Error: ${e.message} (${e.code})`];
  const issues = (e.details?.issues as Array<{ path?: string; message?: string }> | undefined) ?? [];
  for (const i of issues.slice(0, 10)) out.push(`  ${i.path ?? ''}: ${i.message ?? ''}`);
  if (e.hint) out.push(`Hint: ${e.hint}`);
  if (requestId) out.push(`Request: ${requestId}`);
  return out.join('\n');
}
