import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  json: any;
}

export type Behaviour = (
  req: Received,
  n: number,
) => {
  status?: number;
  body?: string;
  hangMs?: number;
  /** answers once this settles (instead of after hangMs): a test holds an answer until it is ready */
  after?: Promise<unknown>;
  headers?: Record<string, string>;
};

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: records every request and answers as the
 * behaviour says (default 200 "ok"). `set` changes the behaviour; `waitFor` polls the record.
 */
export async function startReceiver(behaviour: Behaviour = () => ({ status: 200, body: 'ok' }), host = '127.0.0.1') {
  const requests: Received[] = [];
  let current = behaviour;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: any;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
      const rec: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, json };
      requests.push(rec);
      const out = current(rec, requests.length);
      const answer = () => {
        hanging.delete(res);
        if (res.destroyed) return;
        res.writeHead(out.status ?? 200, { 'content-type': 'text/plain', ...(out.headers ?? {}) });
        res.end(out.body ?? 'ok');
      };
      if (out.after) {
        hanging.add(res);
        void out.after.then(answer, answer);
      } else if (out.hangMs) {
        hanging.add(res);
        setTimeout(answer, out.hangMs).unref();
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/hook`,
    requests,
    set(b: Behaviour) {
      current = b;
    },
    async waitFor(pred: (r: Received[]) => boolean, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (!pred(requests)) {
        if (Date.now() > until)
          throw new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests)`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return requests;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * startReceiver for a test file: every receiver it starts is closed after the file's tests. Called
 * after the app's set-up, its receivers close before the app (after-hooks run last-registered first).
 */
export function fileReceivers() {
  const open: Awaited<ReturnType<typeof startReceiver>>[] = [];
  afterAll(async () => {
    for (const r of open.splice(0)) await r.close();
  });
  return async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    open.push(r);
    return r;
  };
}

/** Polls fn until it returns a truthy value. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 30));
  }
}
