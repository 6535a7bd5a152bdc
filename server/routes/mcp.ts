import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { McpContext } from '../../mcp/context.js';
import { mcpOps } from '../../shared/contracts/mcp.js';
import type { Actor } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { authorize, hasScope } from '../http/auth.js';
import { callerGuardOf } from '../http/caller-origin.js';
import type { AppEnv, Ctx } from '../http/context.js';
import { mount } from '../http/mount.js';

const MCP_BODY_LIMIT = 1024 * 1024;

/**
 * The MCP SDK and the tool table (about 7 MB with the SDK's own zod) load with the first /mcp
 * request, not at start: most servers never get one.
 */
let mcpModules: Promise<
  [typeof import('../../mcp/server.js'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]
> | null = null;
const loadMcp = () => {
  mcpModules ??= Promise.all([
    import('../../mcp/server.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]);
  mcpModules.catch(() => {
    mcpModules = null; // a failed load is tried again by the next request
  });
  return mcpModules;
};

/** Headers of the outer request that the in-process API calls carry too (client IP, request id). */
function forwarded(c: Ctx): Record<string, string> {
  const edge = c.get('deps').config.clientIpHeader;
  const names = edge ? ['x-forwarded-for', edge] : ['x-forwarded-for'];
  const out: Record<string, string> = { 'x-request-id': c.get('requestId') };
  for (const n of names) {
    const v = c.req.header(n);
    if (v) out[n] = v;
  }
  return out;
}

/**
 * POST /mcp: MCP over streamable HTTP, stateless (a new server and transport per request). The
 * Bearer API key or OAuth access token is checked by the API's own auth; the tools then call the
 * API in process with it, so every call passes the same scope checks, tenancy and validation as
 * over the network. Without one, /mcp answers 401 with the OAuth challenge (app.ts adds
 * WWW-Authenticate); POST /mcp/public lists only the tools of public operations (onboarding).
 */
export function registerMcp(app: OpenAPIHono<AppEnv>) {
  const limit = bodyLimit({
    maxSize: MCP_BODY_LIMIT,
    onError: () => {
      throw new ApiError('payload_too_large', 'The MCP request is larger than 1 MB.', {
        headers: { Connection: 'close' },
      });
    },
  });
  // DNS rebinding: a page that got our address under its own name is refused before anything runs.
  const guard: MiddlewareHandler<AppEnv> = async (c, next) => {
    callerGuardOf(c.get('deps').config)(c.req.header('host'), c.req.header('origin'));
    await next();
  };
  for (const path of ['/mcp', '/mcp/public']) {
    app.use(path, limit);
    app.use(path, guard);
  }

  // Credentials first (before the body is validated), so a bare request gets the OAuth challenge.
  const credentials: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (!c.req.header('authorization')) {
      throw new ApiError('unauthorized', 'POST /mcp needs credentials: an OAuth access token or an API key.', {
        hint:
          'An MCP client that follows the MCP authorization spec signs in with OAuth from the WWW-Authenticate header; ' +
          'otherwise send "Authorization: Bearer <API_KEY>", or use POST /mcp/public for the onboarding tools.',
      });
    }
    await authorize('submit')(c, next); // 401 for an invalid key or token
  };
  mount(
    app,
    mcpOps.call,
    (c) => serve(app, c, c.get('actor'), /^Bearer\s+(\S+)$/i.exec((c.req.header('authorization') ?? '').trim())?.[1]),
    [credentials],
  );
  mount(app, mcpOps.public, (c) => serve(app, c, null, undefined));
}

/** One MCP request answered by a fresh server whose tools call the API in process as `actor`. */
async function serve(app: OpenAPIHono<AppEnv>, c: Ctx, actor: Actor | null, apiKey: string | undefined) {
  const extra = forwarded(c);
  const env = c.env;
  const ctx: McpContext = {
    mode: 'http',
    baseUrl: c.get('deps').config.publicBaseUrl,
    // The same socket (env) and forwarding headers, so rate limits see the real client.
    fetch: (input, init) => {
      const req = new Request(input, init);
      for (const [k, v] of Object.entries(extra)) if (!req.headers.has(k)) req.headers.set(k, v);
      return Promise.resolve(app.request(req, undefined, env));
    },
    apiKey: () => apiKey,
    allows: (scope) => {
      if (scope === 'public') return true;
      if (scope === 'session' || !actor) return false;
      return hasScope(actor, scope);
    },
  };

  // Stateless JSON answers: every answer is complete when handleRequest resolves.
  const [{ buildMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await loadMcp();
  const server = buildMcpServer(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    // The transport insists on both types in Accept; answers are always JSON here, so plain clients may omit it.
    const headers = new Headers(c.req.raw.headers);
    headers.set('accept', 'application/json, text/event-stream');
    headers.delete('content-length'); // the body was read already and is passed parsed
    const req = new Request(c.req.url, { method: 'POST', headers });
    return (await transport.handleRequest(req, { parsedBody: await c.req.json() })) as never;
  } finally {
    await server.close();
  }
}
