import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { listen } from '../../server/http/listen.js';
import { createLogger } from '../../server/log.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { freePort } from '../helpers/process.js';

/**
 * The listening server: slow clients are cut off, an idle keep-alive connection closes, a client
 * that hangs up mid-body is a closed request (not a database outage), and a taken PORT is one line.
 */

let t: TestEnv;
let server: Server;
let port: number;
const logs: { level: number; msg: string }[] = [];

beforeAll(async () => {
  t = await startTestApp();
  t.deps.log = createLogger(
    'debug',
    new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    }),
  );
  const config = {
    ...t.deps.config,
    port: 0,
    host: '127.0.0.1',
    headersTimeoutMs: 300,
    requestTimeoutMs: 600,
    keepAliveTimeoutMs: 300,
  };
  const listening = await listen(t.app.fetch, config);
  server = listening.server;
  port = listening.address.port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
});

/** A raw connection: what it received, and whether and when the server closed it. */
async function connect() {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let received = '';
  socket.on('data', (d) => {
    received += String(d);
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return {
    socket,
    received: () => received,
    /** Resolves true when the server closes the connection within ms. */
    closedWithin: (ms: number) =>
      Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]),
  };
}

/** Waits until `count` closed-request lines were logged since `from`; returns the lines since `from`. */
async function closedLines(from: number, count: number) {
  const deadline = Date.now() + 5000;
  while (logs.slice(from).filter((l) => l.msg === 'request closed by the client').length < count) {
    if (Date.now() > deadline) throw new Error(`no closed-request lines: ${JSON.stringify(logs.slice(from))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return logs.slice(from);
}

describe('slow and idle clients', () => {
  it('defaults to 20 s for headers, 60 s for a request, 5 s of keep-alive idle', () => {
    const c = loadConfig({});
    expect([c.headersTimeoutMs, c.requestTimeoutMs, c.keepAliveTimeoutMs]).toEqual([20_000, 60_000, 5_000]);
    const set = loadConfig({
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000',
    });
    expect([set.headersTimeoutMs, set.requestTimeoutMs, set.keepAliveTimeoutMs]).toEqual([1000, 2000, 3000]);
  });

  it('takes 0 as no limit', async () => {
    const off = loadConfig({
      HTTP_HEADERS_TIMEOUT_MS: '0',
      HTTP_REQUEST_TIMEOUT_MS: '0',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '0',
    });
    const { server: s, address } = await listen(t.app.fetch, { ...off, port: 0, host: '127.0.0.1' });
    try {
      expect([s.headersTimeout, s.requestTimeout, s.keepAliveTimeout]).toEqual([0, 0, 0]);
      expect((await fetch(`http://127.0.0.1:${address.port}/healthz`)).status).toBe(200);
    } finally {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  it('cuts off a client that sends its headers slowly (408)', async () => {
    const c = await connect();
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    expect(await c.closedWithin(5000)).toBe(true);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts off a client that sends its body slowly, and logs it as a closed request', async () => {
    const from = logs.length;
    const c = await connect();
    c.socket.write(
      'POST /v1/auth/request-code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":',
    );
    expect(await c.closedWithin(5000)).toBe(true);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
    const lines = await closedLines(from, 1);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it('closes an idle keep-alive connection', async () => {
    const c = await connect();
    c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
    expect(await c.closedWithin(5000)).toBe(true);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200/);
  });
});

describe('a client that disconnects mid-body', () => {
  it('is logged at debug as a closed request, never as the database being unavailable', async () => {
    const form = await t.api('POST', '/v1/forms', (await t.onboard()).key, { json: { name: 'hang up' } });
    const from = logs.length;
    for (const target of [`/s/${form.json.id}`, '/v1/auth/request-code']) {
      const c = await connect();
      c.socket.write(
        `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`,
      );
      await new Promise((r) => setTimeout(r, 100));
      c.socket.destroy();
    }
    const mine = await closedLines(from, 2);
    expect(mine.filter((l) => l.msg === 'request closed by the client').every((l) => l.level === 20)).toBe(true);
    expect(mine.filter((l) => l.level >= 40)).toEqual([]);
    expect(mine.some((l) => /database unavailable|unexpected failure/.test(l.msg))).toBe(false);
  });
});

describe('PORT already in use', () => {
  it('says so in one line naming PORT and HOST, and exits 1 without a stack trace', async () => {
    const taken = await freePort();
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(taken, '127.0.0.1', r));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-port-'));
    try {
      const child = spawn(path.resolve('node_modules/.bin/tsx'), ['server/main.ts'], {
        env: { ...process.env, PORT: String(taken), HOST: '127.0.0.1', DATA_DIR: dataDir, WORKER: 'false' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
      });
      child.stderr.on('data', (d) => {
        out += String(d);
      });
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code, out).toBe(1);
      const fatal = out.split('\n').filter((l) => l.includes('"level":60'));
      expect(fatal, out).toHaveLength(1);
      expect(JSON.parse(fatal[0]).msg).toMatch(/cannot listen on 127\.0\.0\.1:\d+: .*PORT.*HOST/);
      expect(out).not.toMatch(/\n\s+at /);
      expect(out).not.toContain('"stack"');
    } finally {
      holder.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
