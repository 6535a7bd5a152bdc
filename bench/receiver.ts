import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { nowMs } from './proc.js';

/** What arrived for one form. */
export interface FormTally {
  /** distinct delivery ids */
  ids: Set<string>;
  /** arrival time (nowMs) of each distinct delivery, in arrival order */
  arrivals: number[];
  /** requests including repeats of a delivery already seen */
  requests: number;
  /** e2e: sequence number → milliseconds from the sender's stamp to arrival (first arrival only) */
  latency: Map<number, number>;
}

interface Payload {
  id?: unknown;
  form?: { id?: unknown };
  data?: { seq?: unknown; sent_at?: unknown };
}

/**
 * The webhook receiver: node:http on loopback, answering 200 at once to every request, then
 * counting it by form (`form.id` of the payload) and delivery (`id`). A payload whose `data` holds
 * a numeric `sent_at` stamp (the sender's nowMs) and `seq` gets its end-to-end latency recorded.
 */
export async function startReceiver() {
  const forms = new Map<string, FormTally>();
  const sockets = new Set<Socket>();
  let unparsed = 0;
  let total = 0;

  const tally = (formId: string) => {
    let t = forms.get(formId);
    if (!t) {
      t = { ids: new Set(), arrivals: [], requests: 0, latency: new Map() };
      forms.set(formId, t);
    }
    return t;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = nowMs();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      total += 1;
      let body: Payload;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Payload;
      } catch {
        unparsed += 1;
        return;
      }
      const formId = typeof body?.form?.id === 'string' ? body.form.id : null;
      const id = typeof body?.id === 'string' ? body.id : String(req.headers['service-delivery'] ?? '');
      if (!formId || !id) {
        unparsed += 1;
        return;
      }
      const t = tally(formId);
      t.requests += 1;
      if (t.ids.has(id)) return;
      t.ids.add(id);
      t.arrivals.push(at);
      const { seq, sent_at: sentAt } = body.data ?? {};
      if (typeof seq === 'number' && typeof sentAt === 'number' && !t.latency.has(seq)) t.latency.set(seq, at - sentAt);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    /** The tally of a form (empty when nothing arrived for it yet). */
    of(formId: string): FormTally {
      return tally(formId);
    },
    /** Distinct deliveries that arrived for a form. */
    distinct(formId: string) {
      return forms.get(formId)?.ids.size ?? 0;
    },
    stats() {
      return { total, unparsed };
    },
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
