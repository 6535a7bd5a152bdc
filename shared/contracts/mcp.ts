import { errors, op, z } from './common.js';
import { KEY_IF_ANY } from './security.js';

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

export const mcpOps = {
  call: op('public', {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp_call',
    tags: ['mcp'],
    summary:
      'Model Context Protocol over streamable HTTP (JSON answers): one tool per /v1 operation plus ' +
      'quickstart_and_verify. With `Authorization: Bearer <API_KEY>` the tools the key’s scopes allow are listed; ' +
      'without a key only the onboarding tools (auth_request_code, auth_verify_code, sandboxes_create, …)',
    security: KEY_IF_ANY,
    request: {
      body: { required: true, content: { 'application/json': { schema: McpRequest } } },
    },
    responses: {
      200: {
        description: 'JSON-RPC response(s); transport-level failures answer a JSON-RPC error object',
        content: { 'application/json': { schema: McpResponse } },
      },
      202: { description: 'Accepted: the body held only notifications or responses' },
      404: SESSION_NOT_FOUND,
      ...errors('unauthorized', 'validation_failed', 'payload_too_large'),
    },
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
    security: KEY_IF_ANY,
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
    security: KEY_IF_ANY,
    request: { headers: SessionHeader },
    responses: {
      200: { description: 'The session has ended' },
      404: SESSION_NOT_FOUND,
      ...errors('unauthorized', 'forbidden', 'bad_request'),
    },
  }),
};
