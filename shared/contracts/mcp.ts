import { errors, op, z } from './common.js';
import { KEY_OR_TOKEN, NO_CREDENTIALS } from './security.js';

/** One JSON-RPC 2.0 message; the MCP SDK checks the rest. */
const JsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().optional(),
});

export const McpRequest = z
  .union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)])
  .meta({ id: 'McpRequest', description: 'a JSON-RPC 2.0 message of the Model Context Protocol, or a batch of them' });

export const McpResponse = z
  .union([JsonRpcMessage, z.array(JsonRpcMessage)])
  .meta({ id: 'McpResponse', description: 'the JSON-RPC answer(s)' });

/** The streamable HTTP transport's session header (extension: MCP sessions on /mcp). */
const SessionHeader = z.object({
  'mcp-session-id': z
    .string()
    .max(100)
    .optional()
    .meta({ description: 'the Mcp-Session-Id header the initialize answer carried (required here)' }),
});

const SESSION_NOT_FOUND = {
  description:
    'No such session (unknown, ended or expired): the transport’s JSON-RPC error `{code: -32001, message: "Session not found"}`; initialize again',
  content: { 'application/json': { schema: McpResponse } },
};

const mcpRequest = { body: { required: true, content: { 'application/json': { schema: McpRequest } } } };
const mcpResponses = {
  200: {
    description: 'JSON-RPC response(s); transport-level failures answer a JSON-RPC error object',
    content: { 'application/json': { schema: McpResponse } },
  },
  202: { description: 'Accepted: the body held only notifications or responses' },
};

export const mcpOps = {
  call: op('public', {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp_call',
    tags: ['mcp'],
    summary:
      'Model Context Protocol over streamable HTTP (JSON answers; stateless unless the client keeps the session an initialize starts): one tool per /v1 operation plus ' +
      'quickstart_and_verify; the tools the credential’s scopes allow are listed',
    description:
      'Paste this URL into an agent that follows the MCP authorization spec: without credentials it answers 401 with ' +
      '`WWW-Authenticate: Bearer resource_metadata="…/.well-known/oauth-protected-resource/mcp"` and the agent signs ' +
      'the person in with OAuth (docs/authentication.md). An API key works as before. Changed: a call without ' +
      'credentials no longer gets the onboarding tools here; POST /mcp/public serves them.',
    security: KEY_OR_TOKEN,
    request: mcpRequest,
    responses: {
      ...mcpResponses,
      404: SESSION_NOT_FOUND,
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'payload_too_large'),
    },
  }),
  // extension: the onboarding tools without credentials, moved here from a keyless POST /mcp
  public: op('public', {
    method: 'post',
    path: '/mcp/public',
    operationId: 'mcp_public',
    tags: ['mcp'],
    summary:
      'Model Context Protocol without credentials: only the tools of public operations (auth_request_code, ' +
      'auth_verify_code, sandboxes_create, intake_submit, …), for onboarding',
    description:
      'Extension. What a keyless POST /mcp offered before /mcp began to answer 401 for OAuth clients. An ' +
      'Authorization header is ignored here.',
    security: NO_CREDENTIALS,
    request: mcpRequest,
    responses: { ...mcpResponses, ...errors('validation_failed', 'payload_too_large') },
  }),
  stream: op('public', {
    method: 'get',
    path: '/mcp',
    operationId: 'mcp_stream',
    tags: ['mcp'],
    summary:
      'Extension: the server-to-client SSE stream of an MCP session (notifications/resources/updated for ' +
      'subscribed resources). A POSTed initialize answers with an Mcp-Session-Id header; requests carrying it ' +
      'share one server (subscriptions), requests without it stay stateless. 405 without the header',
    security: KEY_OR_TOKEN,
    request: { headers: SessionHeader },
    responses: {
      200: {
        description: 'text/event-stream of JSON-RPC notifications',
        content: { 'text/event-stream': { schema: z.string() } },
      },
      404: SESSION_NOT_FOUND,
      ...errors('unauthorized', 'forbidden', 'method_not_allowed'),
    },
  }),
  end: op('public', {
    method: 'delete',
    path: '/mcp',
    operationId: 'mcp_end',
    tags: ['mcp'],
    summary: 'Extension: end an MCP session (its subscriptions stop); 400 without the Mcp-Session-Id header',
    security: KEY_OR_TOKEN,
    request: { headers: SessionHeader },
    responses: {
      200: { description: 'The session has ended' },
      404: SESSION_NOT_FOUND,
      ...errors('unauthorized', 'forbidden', 'bad_request'),
    },
  }),
};
