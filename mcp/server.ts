import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApiResult } from '../shared/client.js';
import { buildPath } from '../shared/paths.js';
import { clientFor, type McpContext, type ToolDef, type ToolRun } from './context.js';
import { EXPORT_PREVIEW_SCHEMA, exportPreview } from './export.js';
import type { JsonSchema } from './json-schema.js';
import { registerPrompts } from './prompts.js';
import { quickstartAndVerify } from './quickstart.js';
import { registerResources } from './resources.js';
import { errorResult, okResult, summarize } from './results.js';
import { type OperationTool, operationTools } from './tools.js';

/** Tools that are not one operation each (the drift test allows exactly these). */
export const COMPOUND_TOOLS: ToolDef[] = [quickstartAndVerify];

const INSTRUCTIONS = `formsvc is a form backend: websites post submissions to a form; each is stored, then delivered to email, webhooks or Telegram.
Without an API key: auth_request_code (emails a 6-digit code) → auth_verify_code (returns a key) → quickstart_and_verify (a routed form whose test delivery is proven). Or sandboxes_create to try a form without an account.
Every tool declares an outputSchema; a success returns structuredContent that matches it, plus text.
Failed calls come back as isError results with the API's code, message and hint (text, and _meta["formsvc/error"]): follow the hint.
Resources: formsvc://llms.txt (the guide), formsvc://openapi.json (the HTTP contract), formsvc://forms and the templates formsvc://forms/{id}, formsvc://forms/{id}/submissions (subscribable), formsvc://forms/{id}/drift, formsvc://submissions/{id}.
Prompts: set_up_form, triage_spam, why_no_delivery, schema_from_traffic.`;

const BINARY_LIMIT = 8 * 1024 * 1024;

/**
 * The bytes of a file answer. The client parses a JSON file and decodes a text/* one; a tool that
 * answers files (FILE_SCHEMA) answers them as bytes whatever their type: text as UTF-8, JSON
 * serialized again (the same value, not always the same spacing).
 */
function fileBytes(data: unknown): ArrayBuffer {
  if (data instanceof ArrayBuffer) return data;
  const bytes = new TextEncoder().encode(typeof data === 'string' ? data : JSON.stringify(data));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function binaryResult(tool: OperationTool, res: ApiResult, data: ArrayBuffer, uri: string): CallToolResult {
  const mimeType = res.headers.get('content-type')?.split(';')[0] || 'application/octet-stream';
  if (data.byteLength > BINARY_LIMIT) {
    return errorResult(
      {
        code: 'payload_too_large',
        message: `The file is ${data.byteLength} bytes; tools return at most ${BINARY_LIMIT}.`,
        hint: 'Download it over HTTP from the attachment download_url with a read key.',
      },
      413,
      res.requestId,
    );
  }
  const blob = Buffer.from(data).toString('base64');
  return {
    content: [
      { type: 'text', text: `${tool.name}: ${mimeType}, ${data.byteLength} bytes.` },
      { type: 'resource', resource: { uri, mimeType, blob } },
    ],
    structuredContent: { mime_type: mimeType, size: data.byteLength, uri },
  };
}

/** Operation tools whose answer an agent should not get whole: their own runner and output schema. */
const CUSTOM_RUNS: Record<
  string,
  {
    outputSchema: JsonSchema;
    run(tool: OperationTool, args: Record<string, unknown>, run: ToolRun): Promise<CallToolResult>;
  }
> = {
  forms_export: { outputSchema: EXPORT_PREVIEW_SCHEMA, run: exportPreview },
};

/** The generic runner of an operation tool: split the flat arguments, call the API, shape the answer. */
function operationToolDef(tool: OperationTool): ToolDef {
  const custom = CUSTOM_RUNS[tool.name];
  if (custom) return { ...tool, outputSchema: custom.outputSchema, run: (args, run) => custom.run(tool, args, run) };
  return {
    ...tool,
    async run(args, run) {
      const parts = tool.split(args);
      // Path parameters are checked here (the URL cannot be built without them); the API checks the rest.
      const missing = [...tool.operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((k) => !parts.params[k]);
      if (missing.length) {
        return errorResult(
          {
            code: 'validation_failed',
            message: `Missing ${missing.join(', ')}.`,
            hint: `Pass ${missing.join(', ')}; the tool's input schema lists every field.`,
            details: { issues: missing.map((path) => ({ path, message: 'required' })) },
          },
          422,
        );
      }
      const res = await run.client.call(tool.operation.operationId, { ...parts, signal: run.signal });
      if (res.error?.code === 'unauthorized' && !run.ctx.apiKey()) {
        const hint =
          run.ctx.mode === 'stdio'
            ? 'This session has no API key: call auth_request_code, then auth_verify_code (or set FORMSVC_API_KEY).'
            : 'Connect with Authorization: Bearer <API_KEY>; get a key with auth_request_code, then auth_verify_code.';
        return errorResult({ ...res.error, hint }, res.status, res.requestId);
      }
      if (res.error) return errorResult(res.error, res.status, res.requestId);
      if (res.data instanceof ArrayBuffer || tool.answersFile) {
        const path = buildPath(tool.operation.path, parts.params);
        return binaryResult(tool, res, fileBytes(res.data), `${run.ctx.baseUrl}${path}`);
      }
      let summary = summarize(tool.name, res);
      const key = tool.name === 'auth_verify_code' ? (res.data as { api_key?: string }).api_key : undefined;
      if (key && run.ctx.useKey) {
        run.ctx.useKey(key);
        summary += ' This MCP session now uses the new key; save it (FORMSVC_API_KEY or formsvc login) to keep it.';
      } else if (key) {
        summary += ' Reconnect to this MCP server with the header Authorization: Bearer <api_key> to use it.';
      }
      return okResult(summary, res.data, res.status);
    },
  };
}

/** Every tool this server has, before any scope filter. */
export function allTools(): ToolDef[] {
  return [...operationTools().map(operationToolDef), ...COMPOUND_TOOLS];
}

async function readText(ctx: McpContext, path: string): Promise<string> {
  const res = await (ctx.fetch ?? fetch)(`${ctx.baseUrl}${path}`, { signal: AbortSignal.timeout(15_000) });
  if (!res.ok) throw new McpError(ErrorCode.InternalError, `${path} answered HTTP ${res.status}`);
  return res.text();
}

/**
 * The formsvc MCP server for one context. Tools are listed with JSON Schemas generated from the
 * contract (the low-level handlers, not registerTool: the schemas are data, and the API itself
 * validates and answers with its code and hint). Resources use the high-level API.
 */
export function buildMcpServer(ctx: McpContext): McpServer {
  const server = new McpServer(
    { name: 'formsvc', title: 'formsvc', version: '0.1.0' },
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
  );
  const tools = allTools();
  const visible = (t: ToolDef) => ctx.allows?.(t.scope) ?? true;

  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.filter(visible).map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      outputSchema: t.outputSchema as { type: 'object' },
      annotations: { title: t.title, ...t.annotations },
    })),
  }));

  server.server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${req.params.name}"; see tools/list.`);
    if (!visible(tool) && !ctx.apiKey()) {
      return errorResult(
        {
          code: 'unauthorized',
          message: `${tool.name} needs an API key; this connection has none.`,
          hint: 'Connect with Authorization: Bearer <API_KEY>; get a key with auth_request_code, then auth_verify_code.',
        },
        401,
      );
    }
    if (!visible(tool)) {
      return errorResult(
        {
          code: 'forbidden',
          message: `${tool.name} needs the "${tool.scope}" scope, which this key does not have.`,
          hint: 'Connect with a key of a wider scope (manage ⊃ read ⊃ submit).',
        },
        403,
      );
    }
    const token = extra._meta?.progressToken;
    const run: ToolRun = {
      ctx,
      client: clientFor(ctx),
      signal: extra.signal,
      async progress(done, total, message) {
        if (token === undefined) return;
        await extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: done, total, message },
          })
          .catch(() => {});
      },
    };
    try {
      return await tool.run(req.params.arguments ?? {}, run);
    } catch (err) {
      if (extra.signal.aborted) throw err;
      return errorResult(
        {
          code: 'internal_error',
          message: `The tool failed: ${(err as Error).message}`,
          hint: 'Retry; if it persists, report it.',
        },
        0,
      );
    }
  });

  server.registerResource(
    'llms.txt',
    'formsvc://llms.txt',
    {
      title: 'formsvc guide for agents',
      description: 'From nothing to an API key and a routed form',
      mimeType: 'text/markdown',
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await readText(ctx, '/llms.txt') }],
    }),
  );
  server.registerResource(
    'openapi.json',
    'formsvc://openapi.json',
    {
      title: 'formsvc HTTP contract',
      description: 'OpenAPI 3.1, generated from the live routes',
      mimeType: 'application/json',
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: await readText(ctx, '/openapi.json') }],
    }),
  );
  registerResources(server, ctx);
  registerPrompts(server, ctx);
  return server;
}
