import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../test/helpers/app.js';
import { bodies } from './api-bodies.js';
import { REAL } from './api-values.js';
import { type Auth, auth, contentType, type Encoding, encode, encoding, idemKey } from './api-wire.js';
import { headerAsSeen, headerValue, originValue, pathSegment } from './arbitraries.js';
import { jsonObject, writeJson } from './bodies.js';
import {
  type Answer,
  captureServerErrors,
  expectEnvelope,
  expectWellFormed,
  fuzz,
  guardProcess,
  must,
  type Tally,
} from './support.js';

/**
 * The /v1 create endpoints under generated bodies, encodings and headers: never 5xx, every error is
 * the envelope, credentials are checked before anything else, an Idempotency-Key answers a repeat
 * with the stored answer and a different request with 409, and what a 2xx created can be read back.
 */

let t: TestEnv;
let key: string;
let readKey: string;
let serverErrors: string[] = [];
const guard = guardProcess();
/** Idempotency-Key → the first request made with it (org-scoped: one manage key here). */
const used = new Map<string, { hash: string; status: number; text: string }>();
/** Sandbox Idempotency-Key → the sandbox its first 201 made, and the body that made it. */
const sandboxesByKey = new Map<string, { id: string; text: string }>();

beforeAll(async () => {
  t = await startTestApp({ SANDBOX_SOURCE_ALLOWANCE: '100000', SANDBOX_GLOBAL_CAP: '100000' });
  serverErrors = captureServerErrors(t.deps);
  key = (await t.onboard()).key;
  readKey = (await t.onboard(undefined, { scopes: ['read'] })).key;
  const api = (path: string, json: unknown) => t.api('POST', path, key, { json });
  const enforced = await must(await api('/v1/forms', { name: 'enforced', schema_mode: 'enforce' }), 201, 'form');
  const observed = await must(await api('/v1/forms', { name: 'observed', tags: ['fuzz'] }), 201, 'form');
  const dest = await must(
    await api('/v1/destinations', { type: 'webhook', name: 'sink', config: { url: 'http://127.0.0.1:9/h' } }),
    201,
    'destination',
  );
  const stream = await must(
    await api('/v1/streams', {
      name: 'fixture stream',
      schema: { json_schema: { type: 'object', properties: { email: { type: 'string' } } } },
      sources: [{ selector: 'tag:fuzz' }],
    }),
    201,
    'stream',
  );
  REAL.forms = [enforced.id, observed.id];
  REAL.streams = [stream.id];
  REAL.destinations = [dest.id];
  REAL.projects = [enforced.project_id];
});

afterAll(async () => {
  guard.assertClean();
  guard.dispose();
  await t?.close();
});

function authHeader(a: Auth): Record<string, string> {
  switch (a) {
    case 'manage':
      return { authorization: `Bearer ${key}` };
    case 'read':
      return { authorization: `Bearer ${readKey}` };
    case 'none':
      return {};
    case 'garbage':
      return { authorization: `Bearer svc_live_${crypto.randomBytes(12).toString('hex')}` };
    case 'basic':
      return { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` };
    case 'lowercase':
      return { authorization: `bearer ${key}` };
    case 'sandbox':
      return { authorization: 'Sandbox sbt_nothing' };
  }
}

const decodePath = (p: string) => {
  try {
    return decodeURI(p);
  } catch {
    return p;
  }
};

/** PGlite (not PostgreSQL) reads a text value without a leading U+FEFF (BOM-stripping decoder). */
const asRead = (s: string) => (t.deps.database.kind === 'pglite' ? s.replace(/^\ufeff/, '') : s).toWellFormed();

interface Request {
  path: string;
  body: unknown;
  enc: Encoding;
  type: string | null;
  auth: Auth;
  key: string | null;
  origin: string | null;
}

const common = {
  enc: encoding,
  type: contentType,
  auth,
  key: idemKey,
  origin: fc.option(originValue, { freq: 5 }),
};

/** One POST; the checks every endpoint shares. Returns the answer when it is a 2xx. */
async function post(v: Request, opts: { public?: boolean; unrouted?: boolean }, tally: Tally): Promise<Answer | null> {
  const bytes = encode(v.body, v.enc);
  const headers: Record<string, string> = opts.public ? {} : authHeader(v.auth);
  if (v.type !== null) headers['content-type'] = v.type;
  if (v.key !== null) headers['idempotency-key'] = v.key;
  if (v.origin !== null) headers.origin = v.origin;
  tally.requests += 1;
  const r = await t.request('POST', v.path, { body: bytes, headers });
  tally.add(r.status);
  const label = `POST ${v.path} ${JSON.stringify(headers)} ${new TextDecoder().decode(bytes).slice(0, 300)}`;
  expectWellFormed(r, label, { serverErrors });
  guard.assertClean();
  if (v.enc.kind === 'huge') {
    expect(r.status, label).toBe(413);
    return null;
  }
  if (opts.unrouted) {
    expect([404, 405], `${label}: no such route`).toContain(r.status);
    return null;
  }
  if (!opts.public) {
    if (['none', 'garbage', 'basic', 'sandbox'].includes(v.auth)) expect(r.status, label).toBe(401);
    if (v.auth === 'read') expect(r.status, label).toBe(403);
    if (v.auth === 'manage' && v.key !== null) checkIdempotency(v, bytes, r, label);
  }
  return r.status < 300 ? r : null;
}

/** Idempotency-Key on /v1 POSTs: a repeat gets the stored answer, a different request 409. */
function checkIdempotency(v: Request, bytes: Uint8Array, r: Answer, label: string) {
  const seen = headerAsSeen(v.key ?? undefined) ?? '';
  if (seen.length < 1 || seen.length > 255) {
    expect(r.status, `${label}: Idempotency-Key out of bounds`).toBe(422);
    return;
  }
  const hash = `POST ${decodePath(v.path)}\n${new TextDecoder().decode(bytes)}`;
  const prior = used.get(seen);
  if (!prior) {
    used.set(seen, { hash, status: r.status, text: r.text });
    return;
  }
  if (prior.hash === hash) {
    expect(r.status, `${label}: replayed status`).toBe(prior.status);
    expect(r.text, `${label}: replayed body`).toBe(prior.text);
    expect(r.headers.get('idempotent-replayed')).toBe('true');
  } else {
    expect(r.status, `${label}: key reused for another request`).toBe(409);
    expect(r.json.error.code).toBe('idempotency_conflict');
  }
}

async function get(path: string, tally: Tally, headers: Record<string, string> = { authorization: `Bearer ${key}` }) {
  tally.requests += 1;
  const r = await t.request('GET', path, { headers });
  expectWellFormed(r, `GET ${path}`, { serverErrors });
  expect(r.status, `GET ${path} after create: ${r.text}`).toBe(200);
  return r;
}

/** A created resource reads back; a fresh one (201) under the name it was given. */
async function readsBack(r: Answer, collection: string, body: unknown, tally: Tally) {
  const got = await get(`/v1/${collection}/${r.json.id}`, tally);
  const name = (body as { name?: unknown }).name;
  if (r.status === 201 && typeof name === 'string') expect(got.json.name).toBe(asRead(name));
}

/** A submission to a form whose schema was just fuzzed: the schema check must not fail the request. */
async function submitTo(formId: string, body: string, tally: Tally) {
  tally.requests += 2;
  const r = await t.request('POST', `/s/${formId}`, { body, headers: { 'content-type': 'application/json' } });
  expectWellFormed(r, `POST /s/${formId} ${body.slice(0, 300)}`, { serverErrors });
  const s = await t.request('GET', `/s/${formId}/schema`);
  expectWellFormed(s, `GET /s/${formId}/schema`, { serverErrors });
  guard.assertClean();
}

const RUNS = 300;
const submission = jsonObject.map((o) => writeJson(o, { indent: '', asciiOnly: false, bom: false }));

describe('/v1 create endpoints fuzz', () => {
  const simple: [string, string, fc.Arbitrary<Record<string, unknown>>][] = [
    ['projects', '/v1/projects', bodies.project],
    ['forms', '/v1/forms', bodies.form],
    ['destinations', '/v1/destinations', bodies.destination],
    ['routes', '/v1/routes', bodies.route],
    ['streams', '/v1/streams', bodies.stream],
    ['webhooks', '/v1/webhooks', bodies.webhook],
  ];
  for (const [collection, path, body] of simple) {
    it(`POST ${path}`, async () => {
      const arb = fc.record({ ...common, path: fc.constant(path), body });
      await fuzz(`api ${collection}`, RUNS, arb, async (v, tally) => {
        const r = await post(v, {}, tally);
        if (r) await readsBack(r, collection, v.body, tally);
      });
    });
  }

  it('POST /v1/forms/{id}/schema, then a submission against it', async () => {
    const formId = fc.oneof(
      { weight: 6, arbitrary: fc.nat().map((i) => REAL.forms[i % REAL.forms.length]) },
      { weight: 1, arbitrary: pathSegment },
    );
    const arb = fc.record({
      ...common,
      formId,
      body: bodies.schema,
      submission,
    });
    await fuzz('api schema publish', RUNS, arb, async (v, tally) => {
      // An empty or dot segment is no form id: the URL has no route (and no credentials are checked).
      const unrouted = ['', '.', '..'].includes(v.formId);
      const r = await post({ ...v, path: `/v1/forms/${v.formId}/schema` }, { unrouted }, tally);
      if (!r) return;
      await get(`/v1/forms/${v.formId}/schema`, tally);
      await submitTo(v.formId, v.submission, tally);
    });
  });

  it('POST /v1/quickstart, then a submission to its form', async () => {
    const arb = fc.record({ ...common, path: fc.constant('/v1/quickstart'), body: bodies.quickstart, submission });
    await fuzz('api quickstart', RUNS, arb, async (v, tally) => {
      const r = await post(v, {}, tally);
      if (!r) return;
      await get(`/v1/forms/${r.json.form.id}`, tally);
      await submitTo(r.json.form.id, v.submission, tally);
    });
  });

  it('POST /v1/public/sandboxes', async () => {
    const POOL = ['8f0e7a52-4c1e-4b8e-9a57-0d4c2b8e6f11', '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed', 'not-a-uuid'];
    const sandboxKey = fc.oneof(
      { weight: 6, arbitrary: fc.uuid({ version: 4 }) },
      { weight: 2, arbitrary: fc.constantFrom(...POOL) },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.uuid({ version: 4 }).map((u) => u.toUpperCase()),
          fc.uuid({ version: 1 }),
          headerValue,
          fc.constant(null),
        ),
      },
    );
    const arb = fc.record({
      ...common,
      path: fc.constant('/v1/public/sandboxes'),
      body: bodies.sandbox,
      key: sandboxKey,
    });
    await fuzz('api public sandboxes', RUNS, arb, async (v, tally) => {
      const r = await post(v, { public: true }, tally);
      const seen = headerAsSeen(v.key ?? undefined);
      const uuid = !!seen && /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(seen);
      if (!r) return;
      expect(uuid, `201 only with a lowercase UUIDv4 key, got ${seen}`).toBe(true);
      const text = new TextDecoder().decode(encode(v.body, v.enc));
      const prior = sandboxesByKey.get(seen as string);
      if (prior) expect(r.json.sandbox.id, 'a replayed key answers the same sandbox').toBe(prior.id);
      else sandboxesByKey.set(seen as string, { id: r.json.sandbox.id, text });
      await get(`/v1/public/sandboxes/${r.json.sandbox.id}`, tally, {
        authorization: `Sandbox ${r.json.sandbox_token}`,
      });
    });
  });

  it('the error envelope is the same for unknown paths and methods under /v1', async () => {
    const arb = fc.record({
      method: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'POST'),
      path: fc.oneof(
        fc.constantFrom('/v1', '/v1/', '/v1/forms/', '/v1/forms//schema', '/v1/nothing', '/v1/forms/x/y/z'),
        pathSegment.map((s) => `/v1/${s}`),
      ),
      auth,
    });
    await fuzz('api unknown paths', 150, arb, async (v, tally) => {
      tally.requests += 1;
      const r = await t.request(v.method, v.path, { headers: authHeader(v.auth) });
      tally.add(r.status);
      expectWellFormed(r, `${v.method} ${v.path}`, { serverErrors });
      if (r.status >= 300) expectEnvelope(r, `${v.method} ${v.path}`);
      guard.assertClean();
    });
  });
});
