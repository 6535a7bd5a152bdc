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
import { lazy } from '../lazy.js';
import { McpSessions, type Via } from './mcp-sessions.js';

const MCP_BODY_LIMIT = 1024 * 1024;

/**
 * The MCP SDK and the tool table (about 7 MB with the SDK's own zod) load with the first /mcp
 * request, not at start: most servers never get one.
 */
const loadMcp = lazy(() =>
  Promise.all([import('../../mcp/server.js'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]),
);

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

/** The transport's own answer to a session id it does not know (JSON-RPC error -32001, HTTP 404). */
const sessionNotFound = () =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }), {
    status: 404,
    headers: { 'content-type': 'application/json' },
  });

const notYours = () =>
  new ApiError('forbidden', 'This MCP session was started with another credential.', {
    hint: 'Send the same Authorization header as the initialize request, or initialize a new session.',
  });

/** A lone initialize request (the SDK's own check would load the SDK at start). */
const isInitialize = (body: unknown) =>
  !!body && typeof body === 'object' && !Array.isArray(body) && (body as { method?: unknown }).method === 'initialize';

const bearer = (c: Ctx) => /^Bearer\s+(\S+)$/i.exec((c.req.header('authorization') ?? '').trim())?.[1];

/**
 * /mcp takes credentials (an API key or an OAuth access token), checked before the body is read,
 * so a bare request gets 401 and the OAuth challenge (app.ts adds WWW-Authenticate).
 */
const credentials: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.req.header('authorization')) {
    throw new ApiError('unauthorized', `${c.req.method} /mcp needs credentials: an OAuth access token or an API key.`, {
      hint:
        'An MCP client that follows the MCP authorization spec signs in with OAuth from the WWW-Authenticate header; ' +
        'otherwise send "Authorization: Bearer <API_KEY>", or use POST /mcp/public for the onboarding tools.',
    });
  }
  await authorize('submit')(c, next); // 401 for an invalid key or token
};

/**
 * POST /mcp: MCP over streamable HTTP. The Bearer API key or OAuth access token is checked by the
 * API's own auth; the tools then call the API in process with it, so every call passes the same
 * scope checks, tenancy and validation as over the network. Without credentials /mcp answers 401
 * with the OAuth challenge; POST /mcp/public lists only the tools of public operations
 * (onboarding), statelessly.
 *
 * Two modes side by side on /mcp: a POST without Mcp-Session-Id is stateless (a new server and
 * transport for that request). A POSTed initialize also starts a session (the answer's
 * Mcp-Session-Id header): requests carrying it reach one server kept in this process's memory, GET
 * opens its notification stream (resources/updated for subscriptions), DELETE ends it. Sessions
 * end after MCP_SESSION_IDLE_MS without use; beyond MCP_SESSION_CAP an initialize gets no session.
 */
export function registerMcp(app: OpenAPIHono<AppEnv>) {
  const sessions = new McpSessions();
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

  const post = async (c: Ctx, actor: Actor | null, apiKey: string | undefined, sessionsAllowed: boolean) => {
    const via: Via = { env: c.env, extra: forwarded(c) };
    const sid = sessionsAllowed ? c.req.header('mcp-session-id') : undefined;
    const body = await c.req.json();
    const [{ buildMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await loadMcp();
    // The transport insists on both types in Accept; answers are always JSON here, so plain clients may omit it.
    const headers = new Headers(c.req.raw.headers);
    headers.set('accept', 'application/json, text/event-stream');
    headers.delete('content-length'); // the body was read already and is passed parsed
    const req = new Request(c.req.url, { method: 'POST', headers });

    if (sid) {
      const found = sessions.use(sid, apiKey, via);
      if (!found) return sessionNotFound() as never;
      if (!found.owned) throw notYours();
      return (await found.session.transport.handleRequest(req, { parsedBody: body })) as never;
    }

    const session = sessionsAllowed && isInitialize(body) && sessions.hasRoom();
    const ctx: McpContext = {
      mode: 'http',
      baseUrl: c.get('deps').config.publicBaseUrl,
      // The same socket (env) and forwarding headers (a session's latest request), so rate limits see the real client.
      fetch: (input, init) => {
        const req = new Request(input, init);
        for (const [k, v] of Object.entries(via.extra)) if (!req.headers.has(k)) req.headers.set(k, v);
        return Promise.resolve(app.request(req, undefined, via.env as never));
      },
      apiKey: () => apiKey,
      allows: (scope) => {
        if (scope === 'public') return true;
        if (scope === 'session' || !actor) return false;
        return hasScope(actor, scope);
      },
      canNotify: session,
    };
    const server = buildMcpServer(ctx);

    if (session) {
      // JSON answers to requests; notifications go out on the session's GET stream.
      const transport: InstanceType<typeof WebStandardStreamableHTTPServerTransport> =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id): void => sessions.add(id, { transport, via, close: () => server.close() }, apiKey),
          onsessionclosed: (id) => {
            sessions.remove(id);
            void server.close().catch(() => {});
          },
        });
      await server.connect(transport);
      const res = await transport.handleRequest(req, { parsedBody: body });
      if (!transport.sessionId) await server.close(); // the initialize failed: nothing to keep
      return res as never;
    }

    // Stateless JSON answers: every answer is complete when handleRequest resolves.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return (await transport.handleRequest(req, { parsedBody: body })) as never;
    } finally {
      await server.close();
    }
  };
  mount(app, mcpOps.call, (c) => post(c, c.get('actor'), bearer(c), true), [credentials]);
  mount(app, mcpOps.public, (c) => post(c, null, undefined, false));

  // GET /mcp: a session's notification stream; DELETE /mcp ends a session.
  const bySession = async (c: Ctx, method: 'GET' | 'DELETE') => {
    const apiKey = bearer(c);
    const sid = c.req.header('mcp-session-id');
    if (!sid && method === 'GET') {
      throw new ApiError('method_not_allowed', 'GET /mcp needs an MCP session.', {
        hint: 'POST an initialize request to /mcp; GET with its Mcp-Session-Id header opens the notification stream.',
      });
    }
    if (!sid) {
      throw new ApiError('bad_request', 'DELETE /mcp needs the Mcp-Session-Id header.', {
        hint: 'Send the Mcp-Session-Id header the initialize answer carried.',
      });
    }
    const found = sessions.use(sid, apiKey, { env: c.env, extra: forwarded(c) });
    if (!found) return sessionNotFound();
    if (!found.owned) throw notYours();
    const res = await found.session.transport.handleRequest(c.req.raw);
    return method === 'GET' ? sessions.track(sid, res) : res;
  };
  mount(app, mcpOps.stream, (c) => bySession(c, 'GET') as never, [credentials]);
  mount(app, mcpOps.end, (c) => bySession(c, 'DELETE') as never, [credentials]);
}
