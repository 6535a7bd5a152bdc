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
      'Model Context Protocol over streamable HTTP (stateless, JSON answers): one tool per /v1 operation plus ' +
      'quickstart_and_verify; the tools the credential’s scopes allow are listed',
    description:
      'Paste this URL into an agent that follows the MCP authorization spec: without credentials it answers 401 with ' +
      '`WWW-Authenticate: Bearer resource_metadata="…/.well-known/oauth-protected-resource/mcp"` and the agent signs ' +
      'the person in with OAuth (docs/authentication.md). An API key works as before. Changed: a call without ' +
      'credentials no longer gets the onboarding tools here; POST /mcp/public serves them.',
    security: KEY_OR_TOKEN,
    request: mcpRequest,
    responses: { ...mcpResponses, ...errors('unauthorized', 'forbidden', 'validation_failed', 'payload_too_large') },
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
};
