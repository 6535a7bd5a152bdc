/**
 * The typed HTTP client for formsvc, driven by the operation registry. The CLI and the MCP server
 * call the API only through it; nothing here restates a path or a schema.
 *
 * Stable API (the CLI and mcp/ import it; change it only additively):
 *
 *   const client = createClient({ baseUrl, apiKey?, fetch?, retries?, timeoutMs?, backoffMs?, userAgent? });
 *   const res = await client.call(ops.forms.create, { body: { name: 'Contact' } });
 *   const res = await client.call('forms_get', { params: { id } }); // by operationId
 *   // res: { status, data, error, headers, requestId }
 *   //   success: data = the parsed 2xx body (null for 204), error = null
 *   //   failure: data = null, error = the API envelope's `error` object untouched
 *   //            ({code, message, hint?, docs?, details?}), or a synthetic one:
 *   //            `network_error` (status 0: unreachable, refused, timed out) or
 *   //            `bad_response` (the server answered something that is not the API, e.g. HTML).
 *
 *   call input: { params?, query?, body?, headers?, signal? }
 *     params  path parameters, substituted into the path and URL-encoded
 *     query   query parameters; undefined/null are left out, arrays repeat the key
 *     body    JSON-serialised; a FormData / URLSearchParams / Blob / string is sent as is
 *     headers extra request headers (an explicit Authorization overrides the API key;
 *             an explicit Idempotency-Key replaces the generated one)
 *     signal  aborts the call; the returned promise then rejects with the abort reason
 *   Typed when `operation` is a registry entry: body = z.input of its JSON body schema,
 *   data = z.output of its 2xx JSON schema (DataOf<O>, BodyOf<O>). An unknown operationId rejects.
 *   Also exported: getOperation(operationId) (a promise: the registry loads on first use), buildPath(path, params), honoursIdempotencyKey(op).
 *
 * Retries: only idempotent calls — GET/HEAD/OPTIONS, and POSTs carrying the Idempotency-Key this
 * client generated itself (every POST gets one; the server dedupes them), when the server honours the
 * key (every POST under /v1, intake). Retried on network errors and 502/503/504,
 * `retries` times (default 2) with a small jittered backoff. Every attempt has a timeout
 * (`timeoutMs`, default 15 s), so no call hangs. A caller-supplied Idempotency-Key is sent unchanged
 * and not retried: the caller owns that key's retries.
 *
 * Configuration (flags → env FORMSVC_API_KEY / FORMSVC_BASE_URL → the profile file written by
 * `formsvc login`) lives in ./client-config.ts and is re-exported here: resolveConfig, readProfiles,
 * saveProfile, removeProfile, profilesPath.
 */

import type { Operation, z } from './contracts/common.js';
import { buildPath } from './paths.js';

export {
  DEFAULT_BASE_URL,
  type Profile,
  type ProfilesFile,
  profilesPath,
  type ResolvedConfig,
  readProfiles,
  removeProfile,
  resolveConfig,
  saveProfile,
} from './client-config.js';

/** The envelope's `error` object, or a synthetic one (`network_error`, `bad_response`). */
export interface ApiErrorBody {
  code: string;
  message: string;
  hint?: string;
  docs?: string;
  details?: Record<string, unknown>;
}

export type ApiResult<T = unknown> =
  | { status: number; data: T; error: null; headers: Headers; requestId: string | null }
  | { status: number; data: null; error: ApiErrorBody; headers: Headers; requestId: string | null };

export interface ClientOptions {
  /** e.g. http://127.0.0.1:8787 (a trailing slash is ignored) */
  baseUrl: string;
  /** sent as `Authorization: Bearer <apiKey>` */
  apiKey?: string;
  fetch?: typeof fetch;
  /** extra attempts for idempotent calls; default 2 */
  retries?: number;
  /** per-attempt timeout; default 15000 */
  timeoutMs?: number;
  /** first backoff step; default 250 (then ×3, ±30 % jitter) */
  backoffMs?: number;
  userAgent?: string;
}

export interface CallInput<B = unknown> {
  params?: Record<string, string | number>;
  query?: Record<string, unknown>;
  body?: B | FormData | URLSearchParams | Blob | string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

// ---- types derived from a registry entry ------------------------------------------------------

type JsonSchemaOf<C> = C extends { content: { 'application/json': { schema: infer S } } } ? S : never;
type Success = 200 | 201 | 202;
type SuccessSchema<O> = O extends { responses: infer R }
  ? { [K in keyof R & Success]: JsonSchemaOf<R[K]> }[keyof R & Success]
  : never;
/** The parsed success body of an operation (unknown when it is not described by zod). */
export type DataOf<O> = [SuccessSchema<O>] extends [never]
  ? unknown
  : SuccessSchema<O> extends z.ZodType
    ? z.output<SuccessSchema<O>>
    : unknown;
/** The JSON body an operation takes (unknown when it is not described by zod). */
export type BodyOf<O> = O extends { request: { body: infer B } }
  ? JsonSchemaOf<B> extends z.ZodType
    ? z.input<JsonSchemaOf<B>>
    : unknown
  : never;

export interface Client {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  call<O extends Operation>(operation: O, input?: CallInput<BodyOf<O>>): Promise<ApiResult<DataOf<O>>>;
  call(operation: string, input?: CallInput): Promise<ApiResult<unknown>>;
}

// ---- helpers ------------------------------------------------------------------------------------

let byId: Promise<Map<string, Operation>> | undefined;

/**
 * A registry entry by operationId (rejects for an unknown id: a programming error, not an API one).
 * The registry loads with the first lookup: a caller that passes the entry itself (every hand-written
 * CLI command) never loads the contracts it does not call.
 */
export async function getOperation(operationId: string): Promise<Operation> {
  byId ??= import('./contracts/index.js').then(({ operations }) => new Map(operations.map((o) => [o.operationId, o])));
  const o = (await byId).get(operationId);
  if (!o) throw new Error(`unknown operation "${operationId}"`);
  return o;
}

export { buildPath };

function appendQuery(url: URL, query: Record<string, unknown> = {}) {
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) {
      url.searchParams.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
  }
}

/** Whether the server dedupes this POST by Idempotency-Key, so a retry cannot create twice. */
export function honoursIdempotencyKey(o: Operation): boolean {
  if (o.method !== 'post' || o['x-never-replayed']) return false;
  if (o['x-scope'] !== 'public') return true; // server/http/mount.ts: every authenticated POST
  // The credential-less POSTs under /v1 keep theirs for 24 h (sign-in by code, sandbox creation), intake per form.
  return o.operationId === 'intake_submit' || o.path.startsWith('/v1/');
}

const RETRY_STATUSES = new Set([502, 503, 504]);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

function isRawBody(b: unknown): b is FormData | URLSearchParams | Blob | string {
  return (
    typeof b === 'string' ||
    (typeof FormData !== 'undefined' && b instanceof FormData) ||
    b instanceof URLSearchParams ||
    (typeof Blob !== 'undefined' && b instanceof Blob)
  );
}

function declaredContentType(o: Operation, status: number): string | undefined {
  const r = (o.responses as Record<string, { content?: Record<string, unknown> }>)[String(status)];
  return r?.content ? Object.keys(r.content)[0] : undefined;
}

function networkError(baseUrl: string, err: unknown, timedOut: boolean): ApiErrorBody {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const reason = timedOut ? 'timed out' : cause?.code || cause?.message || (err as Error)?.message || 'failed';
  return {
    code: 'network_error',
    message: `Could not reach ${baseUrl} (${reason}).`,
    hint: 'Check that the server runs (npm start) and that FORMSVC_BASE_URL or --base-url points at it.',
  };
}

function badResponse(baseUrl: string, status: number, contentType: string, text: string): ApiErrorBody {
  const kind = contentType.split(';')[0] || 'an empty body';
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 80);
  return {
    code: 'bad_response',
    message: `${baseUrl} answered HTTP ${status} with ${kind}, not the formsvc JSON API.`,
    hint: 'Check FORMSVC_BASE_URL or --base-url: it must be the formsvc server itself, not a proxy or web page.',
    details: { status, content_type: contentType, ...(snippet ? { body_start: snippet } : {}) },
  };
}

function isEnvelope(v: unknown): v is { error: ApiErrorBody } {
  const e = (v as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && typeof e.message === 'string';
}

// ---- the client ---------------------------------------------------------------------------------

/** A client bound to one server and (optionally) one API key. */
export function createClient(opts: ClientOptions): Client {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? globalThis.fetch;
  const retries = Math.max(0, opts.retries ?? 2);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const backoffMs = opts.backoffMs ?? 250;

  async function call(operation: Operation | string, input: CallInput = {}): Promise<ApiResult> {
    const o = typeof operation === 'string' ? await getOperation(operation) : operation;
    const method = o.method.toUpperCase();
    const url = new URL(baseUrl + buildPath(o.path, input.params));
    appendQuery(url, input.query);

    const headers = new Headers({ accept: 'application/json' });
    if (opts.userAgent) headers.set('user-agent', opts.userAgent);
    if (opts.apiKey) headers.set('authorization', `Bearer ${opts.apiKey}`);
    let body: RequestInit['body'];
    if (input.body !== undefined) {
      if (isRawBody(input.body)) body = input.body as RequestInit['body'];
      else {
        body = JSON.stringify(input.body);
        headers.set('content-type', 'application/json');
      }
    }
    for (const [k, v] of Object.entries(input.headers ?? {})) headers.set(k, v);

    let retryable = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
    if (method === 'POST' && !headers.has('idempotency-key')) {
      headers.set('idempotency-key', crypto.randomUUID()); // lowercase UUIDv4, as sandbox creation requires
      retryable = honoursIdempotencyKey(o);
    }
    const attempts = retryable ? retries + 1 : 1;

    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout;
      let res: Response;
      try {
        res = await doFetch(url, { method, headers, body, signal });
      } catch (err) {
        if (input.signal?.aborted) throw err;
        if (attempt < attempts) {
          await sleep(backoff(attempt), input.signal);
          continue;
        }
        return fail(0, networkError(baseUrl, err, timeout.aborted), new Headers());
      }
      if (RETRY_STATUSES.has(res.status) && attempt < attempts) {
        await res.body?.cancel().catch(() => {});
        await sleep(backoff(attempt), input.signal);
        continue;
      }
      try {
        return await read(o, res);
      } catch (err) {
        if (input.signal?.aborted) throw err;
        return fail(res.status, networkError(baseUrl, err, timeout.aborted), res.headers);
      }
    }
  }

  function backoff(attempt: number) {
    return Math.round(backoffMs * 3 ** (attempt - 1) * (0.7 + Math.random() * 0.6));
  }

  function fail(status: number, error: ApiErrorBody, headers: Headers): ApiResult {
    return { status, data: null, error, headers, requestId: headers.get('x-request-id') };
  }

  async function read(o: Operation, res: Response): Promise<ApiResult> {
    const requestId = res.headers.get('x-request-id');
    const contentType = res.headers.get('content-type') ?? '';
    const ok = res.status >= 200 && res.status < 400;
    if (res.status === 204 || res.status === 304 || (ok && res.status >= 300)) {
      await res.body?.cancel().catch(() => {});
      return { status: res.status, data: null, error: null, headers: res.headers, requestId };
    }
    if (/[/+]json\b/.test(contentType)) {
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        return fail(res.status, badResponse(baseUrl, res.status, contentType, text), res.headers);
      }
      if (ok) return { status: res.status, data: parsed, error: null, headers: res.headers, requestId };
      if (isEnvelope(parsed)) return fail(res.status, parsed.error, res.headers);
      return fail(res.status, badResponse(baseUrl, res.status, contentType, text), res.headers);
    }
    // Not JSON: fine only where the contract says so (HTML pages, llms.txt, attachment downloads).
    const declared = ok ? declaredContentType(o, res.status) : undefined;
    if (declared && declared !== 'application/json') {
      const data = contentType.startsWith('text/') ? await res.text() : await res.arrayBuffer();
      return { status: res.status, data, error: null, headers: res.headers, requestId };
    }
    const text = await res.text();
    return fail(res.status, badResponse(baseUrl, res.status, contentType, text), res.headers);
  }

  return { baseUrl, apiKey: opts.apiKey, call: call as Client['call'] };
}
