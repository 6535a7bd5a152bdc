import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestEnv } from '../helpers/app.js';

export type Mode = 'stdio' | 'http';

/** The in-process app on a real loopback port, for the `formsvc mcp` child process to call. */
export async function listen(t: TestEnv): Promise<{ base: string; close: () => Promise<void> }> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * An SDK client: over HTTP, streamable HTTP to the in-process POST /mcp (a session: the SDK client
 * keeps the Mcp-Session-Id and opens the GET stream); over stdio, `formsvc mcp` as a child process
 * with the key in FORMSVC_API_KEY.
 */
export async function connect(mode: Mode, t: TestEnv, base: string, key?: string): Promise<Client> {
  const client = new Client({ name: `mcp-${mode}-test`, version: '0.0.0' });
  if (mode === 'http') {
    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8787/mcp'), {
      fetch: (url, init) => Promise.resolve(t.app.request(String(url), init)),
      requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
    });
    await client.connect(transport);
    return client;
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('FORMSVC_')) env[k] = v;
  const args = fs.existsSync('bin/formsvc.js') ? ['bin/formsvc.js', 'mcp'] : ['--import', 'tsx', 'mcp/main.ts'];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: process.cwd(),
    env: {
      ...env,
      FORMSVC_BASE_URL: base,
      FORMSVC_CONFIG: '/nonexistent/formsvc-profiles.json',
      ...(key ? { FORMSVC_API_KEY: key } : {}),
    },
    stderr: 'ignore',
  });
  await client.connect(transport);
  return client;
}
