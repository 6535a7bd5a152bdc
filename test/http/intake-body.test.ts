import http, { type IncomingMessage, type Server } from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../server/http/listen.js';
import { bufferedBody } from '../../server/intake/parse.js';
import { tenantApp } from '../helpers/tenant.js';

/**
 * Intake reads a body the HTTP parser already holds whole straight from its buffer (parse.ts,
 * bufferedBody), and as a stream otherwise. Over a real listening server, however the bytes come
 * (with the headers, after them, in pieces, two requests in one write), the stored data is the
 * body sent.
 */

const { t, key } = await tenantApp();
let server: Server;
let port: number;
let formId: string;

beforeAll(async () => {
  const listening = await listen(t.app.fetch, { ...t.deps.config, port: 0, host: '127.0.0.1' });
  server = listening.server;
  port = listening.address.port;
  const f = await t.api('POST', '/v1/forms', key, { json: { name: 'Body reads' } });
  expect(f.status).toBe(201);
  formId = f.json.id as string;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function head(type: string, length: number, extra = '') {
  return `POST /s/${formId} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nAccept: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;
}

/** Sends `parts` on one connection, `gapMs` apart; resolves with every answer body once `answers` have come. */
async function raw(parts: (string | Buffer)[], answers = 1, gapMs = 40): Promise<string[]> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let received = '';
  const bodies = () =>
    received
      .split('HTTP/1.1 ')
      .slice(1)
      .map((a) => a.slice(a.indexOf('\r\n\r\n') + 4));
  const done = new Promise<string[]>((resolve, reject) => {
    socket.on('data', (d) => {
      received += String(d);
      const got = bodies();
      if (got.length === answers && got.every((b) => b.trim().endsWith('}'))) resolve(got);
    });
    socket.once('error', reject);
    setTimeout(() => reject(new Error(`no answer; got: ${received}`)), 5000);
  });
  for (const [i, part] of parts.entries()) {
    if (i > 0) await sleep(gapMs);
    socket.write(part);
  }
  try {
    return await done;
  } finally {
    socket.destroy();
  }
}

async function stored(answer: string) {
  const id = (JSON.parse(answer) as { submission_id: string }).submission_id;
  const s = await t.api('GET', `/v1/submissions/${id}`, key);
  expect(s.status).toBe(200);
  return s.json.data as Record<string, unknown>;
}

describe('intake reads the body over a real connection', () => {
  const data = { name: 'Ada Lovelace', message: 'Grüße — a note with ünïcödé and "quotes"', n: 3 };
  const json = Buffer.from(JSON.stringify(data));

  it('stores a JSON body sent with its headers in one write', async () => {
    const [answer] = await raw([Buffer.concat([Buffer.from(head('application/json', json.length)), json])]);
    expect(await stored(answer)).toEqual(data);
  });

  it('stores a JSON body that comes after its headers, and one that comes in two pieces', async () => {
    const [after] = await raw([head('application/json', json.length), json]);
    expect(await stored(after)).toEqual(data);
    const cut = 17;
    const [pieces] = await raw([
      Buffer.concat([Buffer.from(head('application/json', json.length)), json.subarray(0, cut)]),
      json.subarray(cut),
    ]);
    expect(await stored(pieces)).toEqual(data);
  });

  it('stores each of two requests sent together on one connection with its own body', async () => {
    const other = Buffer.from(JSON.stringify({ name: 'Grace Hopper' }));
    const both = Buffer.concat([
      Buffer.from(head('application/json', json.length)),
      json,
      Buffer.from(head('application/json', other.length)),
      other,
    ]);
    const [first, second] = await raw([both], 2);
    expect(await stored(first)).toEqual(data);
    expect(await stored(second)).toEqual({ name: 'Grace Hopper' });
  });

  it('drops a JSON byte-order mark and keeps a form-encoded one, as the stream read does', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const withBom = Buffer.concat([bom, json]);
    const [j] = await raw([Buffer.concat([Buffer.from(head('application/json', withBom.length)), withBom])]);
    expect(await stored(j)).toEqual(data);
    const form = Buffer.concat([bom, Buffer.from('name=Ada&topic=pricing')]);
    const [f] = await raw([Buffer.concat([Buffer.from(head('application/x-www-form-urlencoded', form.length)), form])]);
    expect(await stored(f)).toEqual({ '\ufeffname': 'Ada', topic: 'pricing' });
  });

  it('answers 413 for a declared length over the cap, and 400 for JSON that does not parse', async () => {
    const [big] = await raw([head('application/json', 10 * 1024 * 1024)]);
    expect(JSON.parse(big).error.code).toBe('payload_too_large');
    const bad = Buffer.from('{"name": ');
    const [malformed] = await raw([Buffer.concat([Buffer.from(head('application/json', bad.length)), bad])]);
    expect(JSON.parse(malformed).error.code).toBe('bad_request');
  });
});

describe('bufferedBody', () => {
  /** A plain Node server whose handler asks bufferedBody once the request's first turn is over. */
  async function probe(send: (socket: net.Socket) => Promise<void>, declared: number) {
    let seen: Buffer | null | undefined;
    const s = http.createServer((req: IncomingMessage, res) => {
      void Promise.resolve().then(() => {
        seen = bufferedBody(req, declared);
        if (seen) res.end('taken');
        else req.resume().on('end', () => res.end('streamed'));
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const socket = net.connect((s.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const answered = new Promise<string>((r) => socket.on('data', (d) => r(String(d))));
    await send(socket);
    const answer = await answered;
    socket.destroy();
    await new Promise<void>((r) => s.close(() => r()));
    return { seen, answer };
  }
  const body = Buffer.from('{"a":1}');
  const req = `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`;

  it('takes a body that came with its headers, whole', async () => {
    const { seen, answer } = await probe(async (s) => {
      s.write(Buffer.concat([Buffer.from(req), body]));
    }, body.length);
    expect(seen?.equals(body)).toBe(true);
    expect(answer).toContain('taken');
  });

  it('leaves a body that is not all there yet to the stream', async () => {
    const { seen, answer } = await probe(async (s) => {
      s.write(req);
      await sleep(40);
      s.write(body);
    }, body.length);
    expect(seen).toBeNull();
    expect(answer).toContain('streamed');
  });
});
