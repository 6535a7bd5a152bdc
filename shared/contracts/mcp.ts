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

export const mcpOps = {
  call: op('public', {
    method: 'post',
    path: '/mcp',
    operationId: 'mcp_call',
    tags: ['mcp'],
    summary:
      'Model Context Protocol over streamable HTTP (stateless, JSON answers): one tool per /v1 operation plus ' +
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
      ...errors('unauthorized', 'validation_failed', 'payload_too_large'),
    },
  }),
};
