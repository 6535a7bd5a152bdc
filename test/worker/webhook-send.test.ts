import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { sendSigned, webhookResult } from '../../server/worker/adapters/webhook.js';
import { createOutbound } from '../../server/worker/outbound.js';
import { standardWebhookHeaders } from '../../server/worker/sign.js';
import { startReceiver } from '../helpers/receiver.js';

const outbound = createOutbound({ allowPrivate: true, timeoutMs: 1500 });
afterAll(() => outbound.close());

const send = (url: string, secret: string | null = null) =>
  sendSigned(outbound, {
    url,
    secret,
    deliveryId: 'dl_test',
    event: 'submission.received',
    payload: { id: 'dl_test', data: { a: 1 } },
  });

/** A raw server for answers the receiver helper cannot give (huge bodies, resets). */
async function rawServer(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('webhook sending: what each receiver answer comes to', () => {
  it('maps 2xx to sent, 500 to a retry, 410 to no retry, 3xx to a retry without following', async () => {
    const hook = await startReceiver((req) => {
      if (req.url === '/hook?gone') return { status: 410, body: 'gone' };
      if (req.url === '/hook?moved') return { status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } };
      if (req.url === '/hook?boom') return { status: 500, body: 'boom' };
      return { status: 202, body: 'accepted' };
    });
    try {
      expect(webhookResult(await send(hook.url))).toMatchObject({
        ok: true,
        status_code: 202,
        response_excerpt: 'accepted',
        error: null,
      });
      expect(webhookResult(await send(`${hook.url}?boom`))).toMatchObject({
        ok: false,
        status_code: 500,
        retryable: true,
        error: 'receiver answered 500',
      });
      expect(webhookResult(await send(`${hook.url}?gone`))).toMatchObject({
        ok: false,
        status_code: 410,
        retryable: false,
      });
      const moved = webhookResult(await send(`${hook.url}?moved`));
      expect(moved).toMatchObject({ ok: false, status_code: 302, retryable: true });
      expect(moved.error).toMatch(/redirects are not followed/);
      expect(hook.requests).toHaveLength(4); // the redirect target was never called
    } finally {
      await hook.close();
    }
  });

  it('honours Retry-After on 429 and 503', async () => {
    const hook = await startReceiver(() => ({ status: 429, headers: { 'retry-after': '7' } }));
    try {
      expect(webhookResult(await send(hook.url))).toMatchObject({ ok: false, status_code: 429, retry_after_ms: 7000 });
    } finally {
      await hook.close();
    }
  });

  it('reads at most a small part of a huge response and still records the status', async () => {
    const big = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1024 * 1024, 'x');
      let sent = 0;
      const pump = () => {
        while (sent < 50 && res.write(chunk)) sent += 1;
        if (sent < 50) res.once('drain', pump);
        else res.end();
      };
      pump();
    });
    try {
      const r = webhookResult(await send(big.url));
      expect(r).toMatchObject({ ok: true, status_code: 200 });
      expect(r.response_excerpt.length).toBe(500);
    } finally {
      await big.close();
    }
  });

  it('turns a reset connection and a hanging receiver into retryable failures', async () => {
    const reset = await rawServer((req) => req.socket.destroy());
    const hang = await startReceiver(() => ({ hangMs: 5000 }));
    try {
      const r1 = webhookResult(await send(reset.url));
      expect(r1).toMatchObject({ ok: false, status_code: null, retryable: true });
      expect(r1.error).toMatch(/request failed/);
      const r2 = webhookResult(await send(hang.url));
      expect(r2).toMatchObject({ ok: false, status_code: null, retryable: true });
      expect(r2.error).toMatch(/timed out after 1500 ms/);
    } finally {
      await reset.close();
      await hang.close();
    }
  });

  it('adds Standard Webhooks headers that verify with the whsec_ key', async () => {
    const hook = await startReceiver();
    try {
      const key = crypto.randomBytes(24);
      const secret = `whsec_${key.toString('base64')}`;
      await send(hook.url, secret);
      const req = hook.requests[0];
      const id = String(req.headers['webhook-id']);
      const ts = String(req.headers['webhook-timestamp']);
      const expected = crypto
        .createHmac('sha256', key)
        .update(`${id}.${ts}.${req.raw.toString('utf8')}`)
        .digest('base64');
      expect(req.headers['webhook-signature']).toBe(`v1,${expected}`);
      expect(standardWebhookHeaders(id, req.raw.toString('utf8'), secret, Number(ts))['webhook-signature']).toBe(
        `v1,${expected}`,
      );
    } finally {
      await hook.close();
    }
  });
});
