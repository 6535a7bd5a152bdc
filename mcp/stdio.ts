import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { resolveConfig } from '../shared/client.js';
import type { McpContext } from './context.js';
import { buildMcpServer } from './server.js';

export interface StdioOptions {
  /** default: FORMSVC_API_KEY, else the profile file (`formsvc login`); none is fine (onboarding tools) */
  apiKey?: string;
  /** default: FORMSVC_BASE_URL, else the profile's server, else http://127.0.0.1:8787 */
  baseUrl?: string;
  /** a profile name of the profile file (default: FORMSVC_PROFILE or the current one) */
  profile?: string;
  fetch?: typeof fetch;
  stdin?: Readable;
  stdout?: Writable;
}

/**
 * `formsvc mcp`: the MCP server over stdio, calling the HTTP API of one formsvc server. It starts
 * without a key too; auth_verify_code then gives the rest of the session a key. Logs go to stderr
 * only: stdout carries the protocol.
 */
export async function startStdio(opts: StdioOptions = {}) {
  const resolved = await resolveConfig({ apiKey: opts.apiKey, baseUrl: opts.baseUrl, profile: opts.profile });
  let apiKey = resolved.apiKey;
  if (resolved.note) process.stderr.write(`formsvc mcp: ${resolved.note}\n`);
  const ctx: McpContext = {
    mode: 'stdio',
    baseUrl: resolved.baseUrl,
    fetch: opts.fetch,
    apiKey: () => apiKey,
    useKey: (key) => {
      apiKey = key;
    },
  };
  const server = buildMcpServer(ctx);
  const transport = new StdioServerTransport(opts.stdin, opts.stdout);
  await server.connect(transport);
  process.stderr.write(
    `formsvc mcp: serving over stdio for ${resolved.baseUrl} (${apiKey ? 'with an API key' : 'no API key yet: use auth_request_code'})\n`,
  );
  return {
    server,
    baseUrl: resolved.baseUrl,
    close: () => server.close(),
  };
}
