import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  type ReadResourceResult,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApiErrorBody, ApiResult } from '../shared/client.js';
import { clientFor, type McpContext } from './context.js';

/** MCP's "resource not found" error code (the spec's -32002). */
const RESOURCE_NOT_FOUND = -32002;
/** How often a connection with subscriptions asks the API for each subscribed form's newest submission. */
export const POLL_MS = 1500;
/** Subscriptions one connection may hold: each costs one API read per POLL_MS. */
export const MAX_SUBSCRIPTIONS = 20;
/** Items a template's list callback offers in resources/list (the rest: formsvc://forms and its cursor). */
const LIST_LIMIT = 50;
const PAGE_LIMIT = 25;

const JSON_TYPE = 'application/json';
const SUBMISSIONS_URI = /^formsvc:\/\/forms\/([^/?#]+)\/submissions(?:\?.*)?$/;

/** An API failure as an MCP error: the envelope's code, message and hint, and the envelope as data. */
function apiError(uri: string, res: ApiResult): McpError {
  const e: ApiErrorBody = res.error ?? { code: 'bad_response', message: 'no error body' };
  const code =
    res.status === 404 ? RESOURCE_NOT_FOUND : res.status === 0 ? ErrorCode.InternalError : ErrorCode.InvalidParams;
  return new McpError(code, `${uri}: ${e.code}: ${e.message}${e.hint ? ` Hint: ${e.hint}` : ''}`, {
    uri,
    status: res.status,
    error: e,
  });
}

/** One API read for a resource; a failure throws the MCP error. */
async function read<T = Record<string, unknown>>(
  ctx: McpContext,
  uri: string,
  operationId: string,
  input: { params?: Record<string, string>; query?: Record<string, unknown> },
): Promise<T> {
  const res = await clientFor(ctx).call(operationId, input);
  if (res.error) throw apiError(uri, res);
  return res.data as T;
}

/** A list for resources/list or a completion: empty when the key cannot read (no key, submit-only). */
async function listOrEmpty(ctx: McpContext, operationId: string, query: Record<string, unknown>) {
  if (!ctx.apiKey()) return [];
  const res = await clientFor(ctx).call(operationId, { query });
  if (res.status === 401 || res.status === 403) return [];
  if (res.error) throw new McpError(ErrorCode.InternalError, `${operationId}: ${res.error.code}: ${res.error.message}`);
  return (res.data as { data: Record<string, unknown>[] }).data;
}

function json(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value, null, 2) }] };
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';

/** Form ids for a completion: ids starting with the typed value, or forms whose name contains it. */
export async function completeFormId(ctx: McpContext, value: string): Promise<string[]> {
  const forms = await listOrEmpty(ctx, 'forms_list', { limit: 100 });
  const v = value.toLowerCase();
  return forms
    .filter(
      (f) =>
        String(f.id).startsWith(value) ||
        String(f.name ?? '')
          .toLowerCase()
          .includes(v),
    )
    .map((f) => String(f.id));
}

/** Submission ids of the organization (newest first) starting with the typed value. */
export async function completeSubmissionId(ctx: McpContext, value: string): Promise<string[]> {
  const subs = await listOrEmpty(ctx, 'submissions_list', { limit: 100 });
  return subs.map((s) => String(s.id)).filter((id) => id.startsWith(value));
}

/**
 * Subscriptions of one connection to `formsvc://forms/{id}/submissions`. While any exist, a timer
 * asks the API every POLL_MS for each form's newest submission (with the connection's key, so scope
 * and tenancy apply) and sends notifications/resources/updated when it changed. Polling the API
 * works the same over stdio (a remote server) and on any node of a fleet.
 */
export class SubmissionWatch {
  private readonly newest = new Map<string, { formId: string; id: string | null }>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private polling = false;

  constructor(
    private readonly ctx: McpContext,
    private readonly notify: (uri: string) => Promise<void>,
  ) {}

  private async newestId(uri: string, formId: string): Promise<string | null> {
    const page = await read<{ data: { id: string }[] }>(this.ctx, uri, 'forms_submissions', {
      params: { id: formId },
      query: { limit: 1 },
    });
    return page.data[0]?.id ?? null;
  }

  async subscribe(uri: string): Promise<void> {
    const m = SUBMISSIONS_URI.exec(uri);
    if (!m) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `${uri} cannot be subscribed to. Hint: subscribe to formsvc://forms/{id}/submissions (a form's submissions).`,
      );
    }
    const key = `formsvc://forms/${m[1]}/submissions`;
    if (!this.newest.has(key) && this.newest.size >= MAX_SUBSCRIPTIONS) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `This connection already holds ${MAX_SUBSCRIPTIONS} subscriptions. Hint: unsubscribe from one first.`,
      );
    }
    const formId = decodeURIComponent(m[1]);
    // Reading it first: another organization's form or a key without read scope is refused here.
    const id = await this.newestId(key, formId);
    this.newest.set(key, { formId, id });
    this.timer ??= setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref?.();
  }

  unsubscribe(uri: string): void {
    const m = SUBMISSIONS_URI.exec(uri);
    if (m) this.newest.delete(`formsvc://forms/${m[1]}/submissions`);
    if (!this.newest.size) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.newest.clear();
  }

  private async poll(): Promise<void> {
    if (this.polling) return; // a slow API: the next tick waits for this one
    this.polling = true;
    try {
      for (const [uri, seen] of [...this.newest]) {
        const id = await this.newestId(uri, seen.formId).catch(() => seen.id); // a failed read: try next tick
        const current = this.newest.get(uri);
        if (!current || id === current.id) continue;
        current.id = id;
        if (id) await this.notify(uri).catch(() => {});
      }
    } finally {
      this.polling = false;
    }
  }
}

/**
 * The organization's data as resources, read through the HTTP API with the connection's key:
 * the forms, a form with its schema and routes, a form's recent submissions (paged), its open
 * drift, a submission with its deliveries; subscriptions on a form's submissions. Read resources
 * are registered only when the key may read (over HTTP; over stdio the API refuses instead).
 */
export function registerResources(server: McpServer, ctx: McpContext): void {
  const canNotify = ctx.canNotify ?? true;
  // Truthful capabilities: no resources/list_changed is ever sent (lists are read fresh each time).
  server.server.registerCapabilities({ resources: { listChanged: false } });
  if (ctx.allows && !ctx.allows('read')) return;

  const formsTemplate = (uriTemplate: string, list: (f: Record<string, unknown>) => { uri: string; name: string }) =>
    new ResourceTemplate(uriTemplate, {
      list: async () => ({
        resources: (await listOrEmpty(ctx, 'forms_list', { limit: LIST_LIMIT })).map((f) => ({
          ...list(f),
          mimeType: JSON_TYPE,
        })),
      }),
      complete: { id: (value) => completeFormId(ctx, value) },
    });

  server.registerResource(
    'forms',
    'formsvc://forms',
    {
      title: 'Forms',
      description: 'The organization’s forms, newest first (the first 100; next_cursor for more via forms_list)',
      mimeType: JSON_TYPE,
    },
    async (uri) => json(uri.href, await read(ctx, uri.href, 'forms_list', { query: { limit: 100 } })),
  );

  server.registerResource(
    'form',
    formsTemplate('formsvc://forms/{id}', (f) => ({
      uri: `formsvc://forms/${f.id}`,
      name: `Form ${f.name} (${f.id})`,
    })),
    {
      title: 'Form',
      description: 'A form with its current schema version (null until one is published) and its routes',
      mimeType: JSON_TYPE,
    },
    async (uri, vars) => {
      const id = one(vars.id);
      const form = await read(ctx, uri.href, 'forms_get', { params: { id } });
      const [schema, routes] = await Promise.all([
        clientFor(ctx).call('schemas_get', { params: { id } }),
        read<{ data: unknown[] }>(ctx, uri.href, 'routes_list', {
          query: { form_id: id, limit: 200 },
        }),
      ]);
      if (schema.error && schema.status !== 404) throw apiError(uri.href, schema);
      return json(uri.href, { form, schema: schema.error ? null : schema.data, routes: routes.data });
    },
  );

  const readSubmissions = async (uri: URL, vars: Record<string, string | string[]>) => {
    const cursor = one(vars.cursor) || undefined;
    const page = await read<{ data: unknown[]; next_cursor: string | null }>(ctx, uri.href, 'forms_submissions', {
      params: { id: one(vars.id) },
      query: { limit: PAGE_LIMIT, cursor },
    });
    const next = page.next_cursor
      ? `formsvc://forms/${encodeURIComponent(one(vars.id))}/submissions?cursor=${encodeURIComponent(page.next_cursor)}`
      : null;
    return json(uri.href, { ...page, next_uri: next });
  };
  const submissionsMeta = {
    title: 'Recent submissions of a form',
    description: `A form’s submissions, newest first, ${PAGE_LIMIT} a page (every status, tests included); next_uri reads the next page.${
      canNotify ? ' Subscribe to formsvc://forms/{id}/submissions to be told when one arrives.' : ''
    }`,
    mimeType: JSON_TYPE,
  };
  // Two templates: the SDK's matcher does not match `{?cursor}` when the query is absent.
  server.registerResource(
    'form-submissions',
    formsTemplate('formsvc://forms/{id}/submissions', (f) => ({
      uri: `formsvc://forms/${f.id}/submissions`,
      name: `Submissions of ${f.name} (${f.id})`,
    })),
    submissionsMeta,
    readSubmissions,
  );
  server.registerResource(
    'form-submissions-page',
    new ResourceTemplate('formsvc://forms/{id}/submissions{?cursor}', {
      list: undefined,
      complete: { id: (value) => completeFormId(ctx, value) },
    }),
    { ...submissionsMeta, title: 'A page of a form’s submissions' },
    readSubmissions,
  );

  server.registerResource(
    'form-drift',
    formsTemplate('formsvc://forms/{id}/drift', (f) => ({
      uri: `formsvc://forms/${f.id}/drift`,
      name: `Open drift of ${f.name} (${f.id})`,
    })),
    {
      title: 'Open drift of a form',
      description: 'Where real submissions differ from the form’s current schema: open drift events, newest first',
      mimeType: JSON_TYPE,
    },
    async (uri, vars) =>
      json(
        uri.href,
        await read(ctx, uri.href, 'drift_list', {
          params: { id: one(vars.id) },
          query: { status: 'open', limit: 200 },
        }),
      ),
  );

  server.registerResource(
    'submission',
    new ResourceTemplate('formsvc://submissions/{id}', {
      list: async () => ({
        resources: (await listOrEmpty(ctx, 'submissions_list', { limit: LIST_LIMIT })).map((s) => ({
          uri: `formsvc://submissions/${s.id}`,
          name: `Submission ${s.id} (${s.status}, ${s.form_id})`,
          mimeType: JSON_TYPE,
        })),
      }),
      complete: { id: (value) => completeSubmissionId(ctx, value) },
    }),
    {
      title: 'Submission',
      description: 'A submission with its data, spam verdict, validation issues and deliveries',
      mimeType: JSON_TYPE,
    },
    async (uri, vars) => json(uri.href, await read(ctx, uri.href, 'submissions_get', { params: { id: one(vars.id) } })),
  );

  if (!canNotify) return;
  const watch = new SubmissionWatch(ctx, (uri) => server.server.sendResourceUpdated({ uri }));
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    await watch.subscribe(req.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    watch.unsubscribe(req.params.uri);
    return {};
  });
  const closed = server.server.onclose;
  server.server.onclose = () => {
    watch.stop();
    closed?.();
  };
}
