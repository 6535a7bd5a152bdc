import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiErrorBody, ApiResult } from '../shared/client.js';

/** Text beyond this is cut from the text block; structuredContent always holds everything. */
const TEXT_LIMIT = 60_000;

function jsonText(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? '';
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}\n… (cut; structuredContent has it all)` : text;
}

/** A success: a one-line summary, the JSON for clients that read only text, and structuredContent. */
export function okResult(summary: string, data: unknown): CallToolResult {
  const structured =
    data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : { data };
  return {
    content: [{ type: 'text', text: data === null ? summary : `${summary}\n\n${jsonText(data)}` }],
    structuredContent: structured,
  };
}

/**
 * A failure as an `isError` result (not a protocol error), so the agent sees the API's code,
 * message and hint and can act on them: structuredContent is `{error, status}`.
 */
export function errorResult(error: ApiErrorBody, status: number, requestId: string | null = null): CallToolResult {
  const lines = [`${error.code}: ${error.message}`];
  if (error.hint) lines.push(`Hint: ${error.hint}`);
  if (error.details) lines.push(`Details: ${JSON.stringify(error.details)}`);
  if (error.docs) lines.push(`Docs: ${error.docs}`);
  lines.push(status ? `(HTTP ${status}${requestId ? `, request ${requestId}` : ''})` : '(no HTTP answer)');
  return {
    isError: true,
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { error, status, ...(requestId ? { request_id: requestId } : {}) },
  };
}

/** A short, human line for a successful API answer. */
export function summarize(toolName: string, res: ApiResult & { error: null }): string {
  const d = res.data as Record<string, unknown> | null;
  if (res.status === 204 || d === null) return `${toolName}: done (HTTP ${res.status}).`;
  if (typeof d !== 'object') return `${toolName}: HTTP ${res.status}.`;
  if (Array.isArray(d.data)) {
    const more = d.next_cursor ? ` More: call again with cursor "${String(d.next_cursor)}".` : '';
    return `${toolName}: ${d.data.length} item${d.data.length === 1 ? '' : 's'}.${more}`;
  }
  const id = typeof d.id === 'string' ? d.id : undefined;
  const label = ['name', 'status'].map((k) => d[k]).filter((v) => typeof v === 'string');
  const head = id ? `${id}${label.length ? ` (${label.join(', ')})` : ''}` : `HTTP ${res.status}`;
  return `${toolName}: ${head}.`;
}
