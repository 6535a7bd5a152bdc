/** Runs task(i) for every i below count, at most `concurrency` at once; results in index order. */
export async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next;
      next += 1;
      out[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return out;
}

/** One HTTP answer, or status 0 when none came (connection refused or reset, or the deadline passed). */
export interface Reply {
  status: number;
  body: any;
  retryAfter: string | null;
  startedAt: number;
  ms: number;
  error?: string;
}

/** One request with a deadline; never throws. */
export async function send(
  url: string,
  init: { method?: string; json?: unknown; headers?: Record<string, string>; timeoutMs: number },
): Promise<Reply> {
  const startedAt = Date.now();
  try {
    const res = await fetch(url, {
      method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
      headers: { accept: 'application/json', 'content-type': 'application/json', ...(init.headers ?? {}) },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    const text = await res.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return {
      status: res.status,
      body,
      retryAfter: res.headers.get('retry-after'),
      startedAt,
      ms: Date.now() - startedAt,
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return {
      status: 0,
      body: undefined,
      retryAfter: null,
      startedAt,
      ms: Date.now() - startedAt,
      error: e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.cause?.message ?? e.message),
    };
  }
}

/** The submission id an intake answer names: 200/202 bodies, and 429 envelopes in details. */
export const submissionIdOf = (r: Reply): string | undefined =>
  r.body?.submission_id ?? r.body?.error?.details?.submission_id;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
