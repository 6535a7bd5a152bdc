import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client, createClient } from '../shared/client.js';
import type { Scope } from '../shared/contracts/common.js';
import type { JsonSchema } from './json-schema.js';

/** Where the tools' HTTP calls go and with which key; one per MCP connection (stdio) or request (HTTP). */
export interface McpContext {
  mode: 'stdio' | 'http';
  baseUrl: string;
  /** in-process over HTTP: `(req) => app.request(req)` */
  fetch?: typeof fetch;
  apiKey(): string | undefined;
  /** stdio only: the rest of the session uses this key (after auth_verify_code). */
  useKey?(key: string): void;
  /** Whether tools of this scope are listed (HTTP: the key's scopes). Default: all. */
  allows?(scope: Scope): boolean;
  /** Whether the server can send notifications unasked (stdio, an HTTP session; not stateless HTTP). Default: true. */
  canNotify?: boolean;
}

export interface ToolRun {
  ctx: McpContext;
  client: Client;
  signal: AbortSignal;
  progress(done: number, total: number | undefined, message: string): Promise<void>;
}

/** A tool as the MCP server lists and runs it. */
export interface ToolDef {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  inputSchema: JsonSchema;
  /** JSON Schema (`type: "object"`) of a success's structuredContent; errors carry none (mcp/results.ts). */
  outputSchema: JsonSchema;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  run(args: Record<string, unknown>, run: ToolRun): Promise<CallToolResult>;
}

export const USER_AGENT = 'formsvc-mcp/0.1.0';

/** The typed HTTP client with the context's current key. */
export function clientFor(ctx: McpContext): Client {
  return createClient({ baseUrl: ctx.baseUrl, apiKey: ctx.apiKey(), fetch: ctx.fetch, userAgent: USER_AGENT });
}
