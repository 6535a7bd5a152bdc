import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, readProfiles, resolveConfig, saveProfile } from '../../shared/client.js';
import { ops } from '../../shared/contracts/index.js';

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
type Answer = { status: number; type?: string; body?: string; hangMs?: number };

/** A local server answering from a queue per path (default 200 {}), recording every request. */
async function startServer() {
  const seen: Seen[] = [];
  const queues = new Map<string, Answer[]>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const a = queues.get((req.url ?? '').split('?')[0])?.shift() ?? { status: 200, body: '{}' };
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, { 'content-type': a.type ?? 'application/json', 'x-request-id': 'req-1' });
        res.end(a.body ?? '');
      };
      if (a.hangMs) setTimeout(send, a.hangMs).unref();
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    answer: (p: string, ...answers: Answer[]) => queues.set(p, answers),
    reset: () => {
      seen.length = 0;
      queues.clear();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const envelope = (code: string, message: string, hint?: string) => JSON.stringify({ error: { code, message, hint } });
const unavailable: Answer = { status: 503, body: envelope('service_unavailable', 'busy') };

describe('shared/client', () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    srv = await startServer();
  });
  afterAll(() => srv.close());
  const client = (o: Partial<Parameters<typeof createClient>[0]> = {}) =>
    createClient({ baseUrl: `${srv.base}/`, apiKey: 'fk_test', backoffMs: 1, ...o });

  it('substitutes and encodes path params, sends query, key and JSON; types the answer', async () => {
    srv.reset();
    srv.answer('/v1/forms/a%2Fb%20c', { status: 200, body: JSON.stringify({ id: 'a/b c', name: 'x' }) });
    const res = await client().call(ops.forms.get, { params: { id: 'a/b c' } });
    expect(res).toMatchObject({ status: 200, error: null, data: { id: 'a/b c' }, requestId: 'req-1' });
    await client().call('forms_list', { query: { limit: 5, status: undefined, project: 'p q' } });
    expect(srv.seen[1].url).toBe('/v1/forms?limit=5&project=p+q');
    expect(srv.seen[1].headers.authorization).toBe('Bearer fk_test');
    await client().call(ops.forms.create, { body: { name: 'Contact' } });
    expect(srv.seen[2]).toMatchObject({ method: 'POST', body: '{"name":"Contact"}' });
    expect(srv.seen[2].headers['content-type']).toBe('application/json');
    expect(srv.seen[2].headers['idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    await expect(client().call('nope_nope')).rejects.toThrow(/unknown operation/);
  });

  it('passes the error envelope through untouched', async () => {
    srv.reset();
    const error = { code: 'not_found', message: 'form x was not found', hint: 'list forms', details: { id: 'x' } };
    srv.answer('/v1/forms/x', { status: 404, body: JSON.stringify({ error }) });
    const res = await client().call(ops.forms.get, { params: { id: 'x' } });
    expect(res).toMatchObject({ status: 404, data: null, error });
    expect(srv.seen).toHaveLength(1);
  });

  it('retries GETs and its own idempotent POSTs on 502/503/504, with the same Idempotency-Key', async () => {
    srv.reset();
    srv.answer(
      '/v1/forms',
      unavailable,
      { status: 502, body: 'bad gateway', type: 'text/plain' },
      { status: 200, body: '{"data":[],"next_cursor":null}' },
    );
    expect((await client().call(ops.forms.list)).status).toBe(200);
    expect(srv.seen).toHaveLength(3);

    srv.reset();
    srv.answer('/v1/forms', unavailable, { status: 201, body: '{"id":"fm_1"}' });
    expect((await client().call(ops.forms.create, { body: { name: 'A' } })).status).toBe(201);
    expect(srv.seen).toHaveLength(2);
    expect(srv.seen[0].headers['idempotency-key']).toBe(srv.seen[1].headers['idempotency-key']);

    srv.reset();
    srv.answer('/v1/forms', unavailable, unavailable, unavailable, unavailable);
    const gaveUp = await client({ retries: 2 }).call(ops.forms.list);
    expect(gaveUp.error?.code).toBe('service_unavailable');
    expect(srv.seen).toHaveLength(3);
  });

  it('does not retry what is not idempotent: 500s, DELETE, caller-supplied keys', async () => {
    srv.reset();
    srv.answer('/v1/forms', { status: 500, body: envelope('internal_error', 'boom') });
    expect((await client().call(ops.forms.list)).error?.code).toBe('internal_error');
    srv.answer('/v1/forms/x', unavailable, { status: 204 });
    expect((await client().call(ops.forms.delete, { params: { id: 'x' } })).status).toBe(503);
    srv.answer('/v1/forms', unavailable, { status: 201, body: '{}' });
    const own = await client().call(ops.forms.create, { body: { name: 'A' }, headers: { 'idempotency-key': 'mine' } });
    expect(own.status).toBe(503);
    expect(srv.seen.map((s) => s.method)).toEqual(['GET', 'DELETE', 'POST']);
    expect(srv.seen[2].headers['idempotency-key']).toBe('mine');
  });

  it('retries a credential-less POST under /v1 with its key, which the server keeps (sign-in by code)', async () => {
    srv.reset();
    srv.answer('/v1/auth/request-code', unavailable, { status: 200, body: '{}' });
    expect((await client().call(ops.auth.requestCode, { body: { email: 'a@b.co' } })).status).toBe(200);
    expect(srv.seen).toHaveLength(2);
    expect(srv.seen[0].headers['idempotency-key']).toBe(srv.seen[1].headers['idempotency-key']);
  });

  it('answers 204 with data null', async () => {
    srv.reset();
    srv.answer('/v1/forms/x', { status: 204 });
    expect(await client().call(ops.forms.delete, { params: { id: 'x' } })).toMatchObject({
      status: 204,
      data: null,
      error: null,
    });
  });

  it('turns an HTML answer into bad_response, and text the contract declares into data', async () => {
    srv.reset();
    srv.answer('/v1/me', {
      status: 200,
      type: 'text/html; charset=utf-8',
      body: '<html><body>Welcome to nginx</body></html>',
    });
    const res = await client().call(ops.me.get);
    expect(res.data).toBeNull();
    expect(res.error).toMatchObject({ code: 'bad_response', details: { status: 200 } });
    expect(res.error?.message).toMatch(/text\/html/);
    expect(res.error?.hint).toMatch(/FORMSVC_BASE_URL/);
    srv.answer('/v1/me', { status: 200, body: '{"oops' });
    expect((await client().call(ops.me.get)).error?.code).toBe('bad_response');
    srv.answer('/llms.txt', { status: 200, type: 'text/plain', body: '# formsvc' });
    expect((await client().call('system_llms')).data).toBe('# formsvc');
  });

  it('reports an unreachable server and a hanging one as network_error, without hanging', async () => {
    const dead = createClient({ baseUrl: 'http://127.0.0.1:9', backoffMs: 1 });
    const res = await dead.call(ops.system.health);
    expect(res).toMatchObject({ status: 0, data: null, error: { code: 'network_error' } });
    expect(res.error?.message).toMatch(/Could not reach http:\/\/127\.0\.0\.1:9/);
    srv.reset();
    srv.answer('/v1/me', { status: 200, hangMs: 5000 }, { status: 200, hangMs: 5000 });
    const started = Date.now();
    const slow = await client({ timeoutMs: 200, retries: 1 }).call(ops.me.get);
    expect(slow.error).toMatchObject({ code: 'network_error' });
    expect(slow.error?.message).toMatch(/timed out/);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(srv.seen).toHaveLength(2);
  });
});

describe('shared/client-config', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-cfg-'));
  const file = path.join(dir, 'sub', 'profiles.json');
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('resolves flags, then env, then the profile; writes the profile file 0600', async () => {
    const env = { FORMSVC_CONFIG: file };
    expect(await resolveConfig({}, env)).toMatchObject({
      baseUrl: 'http://127.0.0.1:8787',
      apiKey: undefined,
      profile: 'default',
      source: { baseUrl: 'default', apiKey: null },
    });
    await saveProfile(file, 'work', { base_url: 'http://a.test/', api_key: 'fk_work' });
    await saveProfile(file, 'home', { base_url: 'http://b.test', api_key: 'fk_home' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect((await readProfiles(file)).current).toBe('home');
    expect(await resolveConfig({}, env)).toMatchObject({ baseUrl: 'http://b.test', apiKey: 'fk_home' });
    expect(await resolveConfig({ profile: 'work' }, env)).toMatchObject({
      baseUrl: 'http://a.test',
      apiKey: 'fk_work',
      source: { baseUrl: 'profile', apiKey: 'profile' },
    });
    expect(await resolveConfig({}, { ...env, FORMSVC_PROFILE: 'work', FORMSVC_API_KEY: 'fk_env' })).toMatchObject({
      baseUrl: 'http://a.test',
      apiKey: 'fk_env',
    });
    expect(await resolveConfig({ apiKey: 'fk_flag', baseUrl: 'http://c.test' }, env)).toMatchObject({
      baseUrl: 'http://c.test',
      apiKey: 'fk_flag',
      source: { baseUrl: 'flag', apiKey: 'flag' },
    });
  });

  it("never sends a profile's key to another server", async () => {
    const env = { FORMSVC_CONFIG: file, FORMSVC_BASE_URL: 'http://evil.test' };
    const r = await resolveConfig({}, env);
    expect(r.apiKey).toBeUndefined();
    expect(r.note).toMatch(/holds a key for http:\/\/b\.test/);
  });

  it('finds a profile saved for 127.0.0.1 under localhost, [::1], another case or a trailing slash', async () => {
    const own = path.join(dir, 'loopback.json');
    await saveProfile(own, 'default', { base_url: 'http://127.0.0.1:8787', api_key: 'svc_live_local' });
    for (const url of [
      'http://localhost:8787/',
      'HTTP://LocalHost:8787',
      'http://[::1]:8787',
      'http://127.0.0.1:8787//',
    ]) {
      const r = await resolveConfig({}, { FORMSVC_CONFIG: own, FORMSVC_BASE_URL: url });
      expect(r.apiKey, url).toBe('svc_live_local');
      expect(r.baseUrl, url).not.toMatch(/\/$|[A-Z]/);
    }
    // Another port, scheme or host is another server: the key stays home.
    for (const url of ['http://localhost:8788', 'https://localhost:8787', 'http://127.0.0.2:8787']) {
      expect((await resolveConfig({ baseUrl: url }, { FORMSVC_CONFIG: own })).apiKey, url).toBeUndefined();
    }
  });

  it('names a broken profile file', async () => {
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '{nope');
    await expect(resolveConfig({}, { FORMSVC_CONFIG: broken })).rejects.toThrow(/broken\.json is not valid JSON/);
  });
});
