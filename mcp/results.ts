import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiErrorBody, ApiResult } from '../shared/client.js';
import type { JsonSchema } from './json-schema.js';

/** Text beyond this is cut from the text block; structuredContent always holds everything. */
const TEXT_LIMIT = 60_000;

/** The `_meta` key of a failed call's envelope (MCP `_meta` names: a prefix, a slash, a name). */
export const ERROR_META = 'formsvc/error';

function jsonText(value: unknown): string {
  const text = JSON.stringify(value, null, 2) ?? '';
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}\n… (cut; structuredContent has it all)` : text;
}

/**
 * How a successful answer becomes structuredContent, which MCP requires to be an object (docs/mcp.md,
 * "Typed results and errors"): a JSON object is itself; any other JSON value (an array, a string, a
 * number) is `{data: value}`; an answer without a body (204) is `{status: 204}`. Files are
 * `{mime_type, size, uri}` (see binaryResult in mcp/server.ts). The output schemas say the same.
 */
export function structuredOf(data: unknown, status: number): Record<string, unknown> {
  if (data === null || data === undefined) return { status };
  if (typeof data === 'object' && !Array.isArray(data)) return data as Record<string, unknown>;
  return { data };
}

/** The output schema of a body the API answers with, wrapped as structuredOf wraps the value. */
export function wrappedSchema(schema: JsonSchema): JsonSchema {
  if (schema.type === 'object') return schema;
  return { type: 'object', properties: { data: schema }, required: ['data'] };
}

/** The output schema of an answer without a body: `{status: 204}`. */
export function noContentSchema(status: number): JsonSchema {
  return {
    type: 'object',
    description: `The API answered ${status} without a body: the call did what it says.`,
    properties: { status: { type: 'integer', const: status } },
    required: ['status'],
  };
}

/** The output schema of a tool that answers a file (an attachment): its type, size and where it is. */
export const FILE_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'A file: the bytes are in a resource content block (base64), this says what they are.',
  properties: {
    mime_type: { type: 'string', description: 'the Content-Type the API answered' },
    size: { type: 'integer', minimum: 0, description: 'bytes' },
    uri: { type: 'string', description: 'the API URL the file was read from' },
  },
  required: ['mime_type', 'size', 'uri'],
};

/** A success: a one-line summary, the JSON for clients that read only text, and structuredContent. */
export function okResult(summary: string, data: unknown, status = 200): CallToolResult {
  return {
    content: [{ type: 'text', text: data === null ? summary : `${summary}\n\n${jsonText(data)}` }],
    structuredContent: structuredOf(data, status),
  };
}

/**
 * A failure as an `isError` result (not a protocol error), so the agent sees the API's code,
 * message and hint and can act on them. It has no structuredContent: the SDK 1.x client checks
 * structuredContent against the tool's success outputSchema even on errors and throws
 * (typescript-sdk #1943). The envelope travels instead as a second text block (JSON:
 * `{error: {code, message, hint, …}, status, request_id?}`) and, the same object, in
 * `_meta["formsvc/error"]`; the first text block says it in lines for a person.
 */
export function errorResult(error: ApiErrorBody, status: number, requestId: string | null = null): CallToolResult {
  const lines = [`${error.code}: ${error.message}`];
  if (error.hint) lines.push(`Hint: ${error.hint}`);
  if (error.details) lines.push(`Details: ${JSON.stringify(error.details)}`);
  if (error.docs) lines.push(`Docs: ${error.docs}`);
  lines.push(status ? `(HTTP ${status}${requestId ? `, request ${requestId}` : ''})` : '(no HTTP answer)');
  const envelope = { error, status, ...(requestId ? { request_id: requestId } : {}) };
  return {
    isError: true,
    content: [
      { type: 'text', text: lines.join('\n') },
      { type: 'text', text: jsonText(envelope) },
    ],
    _meta: { [ERROR_META]: envelope },
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
