import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One webhook request as the receiver saw it. */
export interface Hit {
  /** Service-Delivery header */
  id: string;
  body: any;
  receivedAt: number;
  /** when the answer was written (null while it is held open, or when the receiver went down first) */
  answeredAt: number | null;
  status: number | null;
}

export type Answer = { status: number; delayMs?: number };

/**
 * A webhook receiver on a fixed loopback port that can be taken down (connections reset, new ones
 * refused) and brought back on the same port, answering each request as `answer` says. Every
 * request is recorded with the time it came in and the time and status of its answer.
 */
export async function startFaultReceiver(answer: (hit: Hit) => Answer = () => ({ status: 200 })) {
  const hits: Hit[] = [];
  const sockets = new Set<Socket>();
  let current = answer;
  let server: http.Server | null = null;
  let port = 0;

  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const hit: Hit = {
        id: String(req.headers['service-delivery'] ?? ''),
        body,
        receivedAt: Date.now(),
        answeredAt: null,
        status: null,
      };
      hits.push(hit);
      const out = current(hit);
      const reply = () => {
        if (res.destroyed) return;
        hit.answeredAt = Date.now();
        hit.status = out.status;
        res.writeHead(out.status, { 'content-type': 'text/plain' });
        res.end(out.status < 300 ? 'ok' : 'unavailable');
      };
      if (out.delayMs) setTimeout(reply, out.delayMs).unref();
      else reply();
    });
  };

  const up = async () => {
    if (server) return;
    const s = http.createServer(handler);
    s.on('connection', (sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.off('error', reject);
        resolve();
      });
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  await up();

  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits,
    set(a: (hit: Hit) => Answer) {
      current = a;
    },
    /** Stops listening and resets every open connection: senders get ECONNREFUSED or ECONNRESET. */
    async down() {
      const s = server;
      server = null;
      if (!s) return;
      const closed = new Promise<void>((r) => s.close(() => r()));
      for (const sock of sockets) sock.destroy();
      await closed;
    },
    up,
    /** Hits answered with a 2xx, by delivery id. */
    accepted() {
      const by = new Map<string, Hit[]>();
      for (const h of hits) {
        if (h.status === null || h.status >= 300) continue;
        by.set(h.id, [...(by.get(h.id) ?? []), h]);
      }
      return by;
    },
    /** Waits until at least `n` requests came in, answered or not. */
    async waitForHits(n: number, timeoutMs: number) {
      const end = Date.now() + timeoutMs;
      while (hits.length < n) {
        if (Date.now() > end) throw new Error(`receiver: ${hits.length} of ${n} requests within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    /** Waits until `n` distinct deliveries were answered with a 2xx. */
    async waitForDistinct(n: number, timeoutMs: number) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const got = this.accepted().size;
        if (got >= n) return;
        if (Date.now() > end) throw new Error(`receiver: ${got} of ${n} deliveries arrived within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close() {
      return this.down();
    },
  };
}

export type FaultReceiver = Awaited<ReturnType<typeof startFaultReceiver>>;
