import net from 'node:net';
import type { Agent } from 'undici';
import type { HttpResult, Outbound } from '../core/outbound.js';
import { blockedKind, guardedLookup, RefusedTarget } from './ssrf.js';

/** Bytes of a response body read at most; the rest is discarded unread. */
const READ_CAP = 64 * 1024;
const EXCERPT = 500;

/** Retry-After (seconds or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Outbound HTTP for every adapter: undici `request()` on one dedicated Agent; when private targets
 * are refused, the Agent's `lookup` checks the resolved address at connect time and literal IPs
 * are checked before the request. Redirects are not followed; the body read is capped.
 */
export function createOutbound(opts: { allowPrivate: boolean; timeoutMs: number }): Outbound {
  // undici (about 4 MB of heap) is loaded at the first send: a server that never sends never holds it.
  let client: Promise<{ agent: Agent; request: typeof import('undici').request }> | null = null;
  const undici = () => {
    client ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connections: 64,
        keepAliveTimeout: 10_000,
        connect: opts.allowPrivate ? { timeout: opts.timeoutMs } : { timeout: opts.timeoutMs, lookup: guardedLookup },
      }),
    }));
    return client;
  };

  async function post(url: string, body: string, headers: Record<string, string>, o: { timeoutMs?: number } = {}) {
    const timeoutMs = o.timeoutMs ?? opts.timeoutMs;
    const started = performance.now();
    const done = (r: Omit<HttpResult, 'latencyMs'>): HttpResult => ({
      ...r,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
    });
    const target = checkTarget(url, opts.allowPrivate);
    if (!(target instanceof URL)) return done(target);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const { agent, request } = await undici();
      const res = await request(target, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await readCapped(res.body);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return done({
        ok,
        status: res.statusCode,
        excerpt: text.slice(0, EXCERPT),
        error: null,
        retryAfterMs:
          res.statusCode === 429 || res.statusCode === 503 ? retryAfterMs(res.headers['retry-after']) : undefined,
        location: typeof res.headers.location === 'string' ? res.headers.location : undefined,
      });
    } catch (err) {
      return done(failure(err, timeoutMs, signal));
    }
  }

  return { post, close: async () => (client ? (await client).agent.close() : undefined) };
}

/** The URL to call, or why it is not called: not a URL, not http(s), or a literal private address refused. */
function checkTarget(url: string, allowPrivate: boolean): URL | Omit<HttpResult, 'latencyMs'> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { ok: false, status: null, excerpt: '', error: 'the URL is not valid' };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return { ok: false, status: null, excerpt: '', error: 'only http and https URLs are called', refused: true };
  }
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const kind = !allowPrivate && net.isIP(host) ? blockedKind(host) : null;
  if (kind) return { ok: false, status: null, excerpt: '', error: new RefusedTarget(kind).message, refused: true };
  return target;
}

/** The answer's body as text, read up to READ_CAP; a body cut short or too slow gives what arrived. */
async function readCapped(body: AsyncIterable<unknown> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      chunks.push(buf);
      size += buf.length;
      if (size >= READ_CAP) break;
    }
  } catch {
    // a body cut short or too slow still leaves the status we got
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, READ_CAP).toString('utf8');
}

function failure(err: unknown, timeoutMs: number, signal: AbortSignal): Omit<HttpResult, 'latencyMs'> {
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const refused = [e, e.cause].find((x) => x instanceof RefusedTarget) as RefusedTarget | undefined;
  if (refused) return { ok: false, status: null, excerpt: '', error: refused.message, refused: true };
  const code = e.code ?? e.cause?.code;
  const timedOut =
    signal.aborted ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT';
  if (timedOut) return { ok: false, status: null, excerpt: '', error: `timed out after ${timeoutMs} ms` };
  const detail = [code, e.cause?.message ?? e.message].filter(Boolean).join(': ');
  return { ok: false, status: null, excerpt: '', error: `request failed (${detail})` };
}
