import type { Operation, Scope } from '../shared/contracts/common.js';
import { operations } from '../shared/contracts/index.js';
import { describe } from './describe.js';
import {
  DRAFT_07,
  flattenVariants,
  inputSchemaOf,
  type JsonSchema,
  objectVariants,
  outputSchemaOf,
} from './json-schema.js';
import { FILE_SCHEMA, noContentSchema, wrappedSchema } from './results.js';

/**
 * Operations of /v1 that are deliberately not MCP tools, each with its reason. Session-only
 * operations (scope `session`) are left out by rule: an MCP client holds an API key, never a cookie.
 */
export const NOT_TOOLS: Record<string, string> = {
  auth_sign_in: 'sets a browser session cookie; agents get an API key with auth_verify_code',
  auth_sign_out: 'ends a browser session cookie, which an MCP client never holds',
  billing_webhook: "called by the billing provider with its own signature, not by a person's agent",
  // The service refuses API keys on these (a person's session decides): a tool could only ever fail.
  organizations_switch: 'moves a dashboard session to another organization; an API key belongs to one',
  invitations_accept: 'needs the dashboard session of the invited address, never an API key',
  members_update: 'role changes need the session of an owner or admin, never an API key',
  members_remove: 'removing a member needs the session of an owner or admin, never an API key',
};

/** Operations outside /v1 that are tools too, because an agent needs them to prove a form works. */
export const EXTRA_OPERATIONS = ['intake_submit'];

/** Headers a tool takes as ordinary arguments, under a friendlier name. */
const HEADER_ARGS: Record<string, { arg: string; description: string; value?: (v: string) => string }> = {
  'idempotency-key': {
    arg: 'idempotency_key',
    description: 'a lowercase UUIDv4; generated when left out. Reuse it to get the same answer again',
  },
  'service-sandbox-token': { arg: 'sandbox_token', description: 'the sandbox_token sandboxes_create returned' },
  authorization: {
    arg: 'sandbox_token',
    description: 'the sandbox_token sandboxes_create returned',
    value: (v) => `Sandbox ${v}`,
  },
};

export interface CallParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string>;
  body: unknown;
}

/** One MCP tool made from one registry operation. */
export interface OperationTool {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  operation: Operation;
  inputSchema: JsonSchema;
  /** What structuredContent of a success holds: the operation's 2xx answers, wrapped as mcp/results.ts says. */
  outputSchema: JsonSchema;
  /** The operation answers a file (a 2xx body that is not JSON): the tool answers FILE_SCHEMA. */
  answersFile: boolean;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** Splits the flat tool arguments back into path params, query, headers and body. */
  split(args: Record<string, unknown>): CallParts;
}

/** Whether an operation becomes a tool: every /v1 operation but the session-only ones and NOT_TOOLS. */
export function isToolOperation(o: Operation): boolean {
  if (EXTRA_OPERATIONS.includes(o.operationId)) return true;
  return o.path.startsWith('/v1/') && o['x-scope'] !== 'session' && !(o.operationId in NOT_TOOLS);
}

/** Path parameters get a description naming what they are, e.g. "the delivery id". */
function paramDescription(path: string, name: string): string {
  if (name !== 'id') return `the ${name.replace(/Id$/, '')} id`;
  const seg = path.slice(0, path.indexOf('{id}')).split('/').filter(Boolean).pop() ?? '';
  const singular = seg
    .replace(/ies$/, 'y')
    .replace(/(x|ch|sh)es$/, '$1')
    .replace(/s$/, '');
  return `the ${singular.replace(/-/g, ' ')} id`;
}

function objectPart(schema: unknown): JsonSchema {
  return schema ? inputSchemaOf(schema) : { type: 'object', properties: {} };
}

export type ResponseDef = { content?: Record<string, { schema?: unknown }> };

/**
 * The output schema of an operation tool, from the contract's success answers (the schemas that
 * generate /openapi.json): a JSON body as it is (a non-object one under `data`), no body as
 * `{status}`, a file as FILE_SCHEMA. Several distinct answers (e.g. 200 and 202) become an anyOf.
 */
export function outputSchemaFor(o: Operation): JsonSchema {
  const variants: JsonSchema[] = [];
  for (const [status, res] of Object.entries(o.responses as Record<string, ResponseDef>)) {
    const code = Number(status);
    if (!(code >= 200 && code < 300)) continue;
    const content = res.content ?? {};
    const schema = content['application/json']?.schema;
    const variant = schema
      ? wrappedSchema(outputSchemaOf(schema))
      : Object.keys(content).length
        ? FILE_SCHEMA
        : noContentSchema(code);
    if (!variants.some((v) => JSON.stringify(v) === JSON.stringify(variant))) variants.push(variant);
  }
  if (!variants.length) throw new Error(`${o.operationId}: no 2xx answer in the contract to make an output schema of`);
  if (variants.length === 1) return { $schema: DRAFT_07, ...variants[0] };
  return { $schema: DRAFT_07, type: 'object', anyOf: variants };
}

/** Builds the tool for one operation: one flat input object of path params, query, headers and body. */
export function toolFor(o: Operation): OperationTool {
  const req = (o.request ?? {}) as { params?: unknown; query?: unknown; headers?: unknown; body?: unknown };
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();

  const params = objectPart(req.params);
  for (const name of Object.keys(params.properties ?? {})) {
    properties[name] = { type: 'string', description: paramDescription(o.path, name) };
    required.add(name);
  }
  const query = objectPart(req.query);
  for (const [name, s] of Object.entries(query.properties ?? {})) properties[name] = s;
  for (const name of query.required ?? []) required.add(name);

  const headerArgs: Record<string, (typeof HEADER_ARGS)[string] & { header: string }> = {};
  for (const header of Object.keys(objectPart(req.headers).properties ?? {})) {
    const h = HEADER_ARGS[header];
    if (!h) throw new Error(`${o.operationId}: header "${header}" has no tool argument (mcp/tools.ts HEADER_ARGS)`);
    headerArgs[h.arg] = { ...h, header };
    properties[h.arg] = { type: 'string', description: h.description };
  }

  const bodyDef = (req.body as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.[
    'application/json'
  ]?.schema;
  let bodyMode: 'none' | 'flat' | 'nested' = 'none';
  let additional = false;
  if (bodyDef) {
    const body = inputSchemaOf(bodyDef);
    const variants = objectVariants(body);
    if (variants) {
      bodyMode = 'flat';
      const flat = flattenVariants(variants);
      for (const [name, s] of Object.entries(flat.properties ?? {})) {
        if (name in properties) throw new Error(`${o.operationId}: body field "${name}" clashes with a parameter`);
        properties[name] = s;
      }
      for (const name of flat.required ?? []) required.add(name);
      additional = flat.additionalProperties !== false;
    } else {
      bodyMode = 'nested';
      properties.body = body;
      required.add('body');
    }
  }

  const inputSchema: JsonSchema = {
    $schema: DRAFT_07,
    type: 'object',
    properties,
    ...(required.size ? { required: [...required] } : {}),
    additionalProperties: additional,
  };
  const paramNames = Object.keys(params.properties ?? {});
  const queryNames = Object.keys(query.properties ?? {});

  const method = o.method.toUpperCase();
  return {
    name: o.operationId,
    title: o.operationId.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    description: describe(o, (id) => operations.some((x) => x.operationId === id && isToolOperation(x))),
    scope: o['x-scope'],
    operation: o,
    inputSchema,
    outputSchema: outputSchemaFor(o),
    answersFile: Object.entries(o.responses as Record<string, ResponseDef>).some(
      ([status, res]) => Number(status) < 300 && Object.keys(res.content ?? {}).some((t) => t !== 'application/json'),
    ),
    annotations: {
      readOnlyHint: method === 'GET',
      destructiveHint: method === 'DELETE',
      idempotentHint: method === 'GET' || method === 'PUT' || method === 'PATCH' || method === 'DELETE',
      // Destination tests and submissions reach the outside world (mail, webhooks, Telegram).
      openWorldHint: o.operationId === 'destinations_test' || o.operationId === 'intake_submit',
    },
    split(args) {
      const parts: CallParts = { params: {}, query: {}, headers: {}, body: undefined };
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(args ?? {})) {
        if (v === undefined) continue;
        if (paramNames.includes(k)) parts.params[k] = String(v);
        else if (queryNames.includes(k)) parts.query[k] = v;
        else if (headerArgs[k]) {
          const h = headerArgs[k];
          parts.headers[h.header] = h.value ? h.value(String(v)) : String(v);
        } else rest[k] = v;
      }
      if (bodyMode === 'flat') parts.body = rest;
      else if (bodyMode === 'nested') parts.body = rest.body;
      return parts;
    },
  };
}

let cache: OperationTool[] | undefined;

/** Every operation tool, in registry order (built once: the registry is static). */
export function operationTools(): OperationTool[] {
  cache ??= operations.filter(isToolOperation).map(toolFor);
  return cache;
}
