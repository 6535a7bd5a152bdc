import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../test/helpers/app.js';
import { headerAsSeen, headerValue, submitHeaders } from './arbitraries.js';
import {
  boundary,
  htmlEscape,
  isFilePart,
  jsonObject,
  jsonStyle,
  multipartBytes,
  multipartHeader,
  notAnObject,
  type PctStyle,
  part,
  urlencodedBytes,
  urlGarbage,
  urlPairs,
  writeJson,
} from './bodies.js';
import { control, FILE, group, idempotencyKey, normalize, put, type Refusal, refusal } from './model.js';
import { captureServerErrors, expectWellFormed, fuzz, guardProcess, must, type Tally } from './support.js';

/**
 * POST /s/{formId} under generated bodies, encodings and headers. Every answer is checked against
 * the model in ./model.ts: refused bodies get the statuses the Limits table names, accepted ones are
 * stored and read back through GET /v1/submissions/{id} (or the sandbox read view) exactly as the
 * model says, a repeated idempotency key answers the original submission, and nothing answers 5xx.
 */

type Kind = 'plain' | 'guarded' | 'enforced' | 'paused' | 'sandbox';
interface Target {
  kind: Kind;
  formId: string;
  honeypot: string;
  sandbox?: { id: string; token: string };
}

let t: TestEnv;
let key: string;
let serverErrors: string[] = [];
const targets = new Map<Kind, Target>();
const guard = guardProcess();
/** Stored submissions by form and idempotency key: a repeat must answer the original. */
const byKey = new Map<string, { id: string; data: unknown }>();

const kind = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Kind>('plain') },
  { weight: 2, arbitrary: fc.constant<Kind>('guarded') },
  { weight: 2, arbitrary: fc.constant<Kind>('enforced') },
  { weight: 1, arbitrary: fc.constant<Kind>('paused') },
  { weight: 1, arbitrary: fc.constant<Kind>('sandbox') },
);

beforeAll(async () => {
  t = await startTestApp({ SANDBOX_SOURCE_ALLOWANCE: '100000', SANDBOX_GLOBAL_CAP: '100000' });
  serverErrors = captureServerErrors(t.deps);
  key = (await t.onboard()).key;
  const api = (method: string, path: string, json: unknown) => t.api(method, path, key, { json });
  const form = async (name: string, extra: Record<string, unknown> = {}) =>
    (await must(await api('POST', '/v1/forms', { name, tags: ['fuzz'], ...extra }), 201, name)).id as string;
  const schema = {
    type: 'object',
    required: ['email'],
    properties: { email: { type: 'string', format: 'email' }, age: { type: 'integer', minimum: 0 } },
  };

  // plain: routed directly and through a stream, so planning and payload snapshots see every body.
  const plain = await form('plain');
  const dest = await must(
    await api('POST', '/v1/destinations', { type: 'webhook', name: 'sink', config: { url: 'http://127.0.0.1:9/h' } }),
    201,
    'destination',
  );
  await must(await api('POST', '/v1/routes', { form_id: plain, destination_id: dest.id }), 201, 'route');
  const stream = await must(
    await api('POST', '/v1/streams', {
      name: 'fuzz stream',
      schema: { json_schema: { type: 'object', properties: { email: { type: 'string' }, note: {} } } },
      sources: [
        { selector: 'tag:fuzz', mapping: { email: { from: 'email' }, note: { from: 'message', default: '-' } } },
      ],
    }),
    201,
    'stream',
  );
  await must(await api('POST', '/v1/routes', { stream_id: stream.id, destination_id: dest.id }), 201, 'stream route');
  targets.set('plain', { kind: 'plain', formId: plain, honeypot: '_gotcha' });

  // guarded: allowed origins, a renamed honeypot, a rate limit, and an observed schema (drift).
  const guarded = await form('guarded');
  await must(
    await api('PATCH', `/v1/forms/${guarded}`, {
      settings: {
        allowed_origins: ['https://ok.example'],
        honeypot_field: 'website',
        rate_limit: { max: 20, window_s: 3600 },
      },
    }),
    200,
    'guarded settings',
  );
  await must(await api('POST', `/v1/forms/${guarded}/schema`, { json_schema: schema }), 201, 'guarded schema');
  targets.set('guarded', { kind: 'guarded', formId: guarded, honeypot: 'website' });

  const enforced = await form('enforced', { schema_mode: 'enforce' });
  await must(await api('POST', `/v1/forms/${enforced}/schema`, { json_schema: schema }), 201, 'enforced schema');
  targets.set('enforced', { kind: 'enforced', formId: enforced, honeypot: '_gotcha' });

  const paused = await form('paused');
  await must(await api('PATCH', `/v1/forms/${paused}`, { status: 'paused' }), 200, 'pause');
  targets.set('paused', { kind: 'paused', formId: paused, honeypot: '_gotcha' });

  const sb = await must(
    await t.request('POST', '/v1/public/sandboxes', {
      json: { name: 'fuzz sandbox' },
      headers: { 'idempotency-key': crypto.randomUUID() },
    }),
    201,
    'sandbox',
  );
  targets.set('sandbox', {
    kind: 'sandbox',
    formId: String(sb.sandbox.submit_url).split('/s/')[1],
    honeypot: '_gotcha',
    sandbox: { id: sb.sandbox.id, token: sb.sandbox_token },
  });
});

afterAll(async () => {
  guard.assertClean();
  guard.dispose();
  await t?.close();
});

/** File references replaced by a marker, and arrays holding one sorted (files land in any order). */
function maskFiles(data: unknown, fileIds: Set<string>): unknown {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return data;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    const m = (x: unknown) => (typeof x === 'string' && fileIds.has(x) ? FILE : x);
    const value = Array.isArray(v) ? v.map(m) : m(v);
    const sorted = Array.isArray(value) && value.includes(FILE) ? [...value].map(String).sort() : value;
    put(out, k, sorted);
  }
  return out;
}

/** GET /v1/submissions/{id} (or the sandbox read view), checked against the stored row. */
async function readBack(target: Target, id: string, tally: Tally): Promise<{ data: unknown; detail: any }> {
  const [row] = await t.deps.database.rows<{ data: unknown }>(sql`select data from submissions where id = ${id}`);
  expect(row, `submission ${id} is stored`).toBeTruthy();
  tally.requests += 1;
  let data: unknown;
  let detail: any;
  if (target.sandbox) {
    const r = await t.request('GET', `/v1/public/sandboxes/${target.sandbox.id}`, {
      headers: { authorization: `Sandbox ${target.sandbox.token}` },
    });
    expect(r.status, r.text).toBe(200);
    detail = r.json.submissions.find((s: { id: string }) => s.id === id);
    data = detail?.data;
  } else {
    const r = await t.api('GET', `/v1/submissions/${id}`, key);
    expect(r.status, r.text).toBe(200);
    detail = r.json;
    data = r.json.data;
  }
  expect(data, 'the API answers the stored data').toEqual(row.data);
  return { data, detail };
}

interface Expectation {
  /** non-empty: the body must be refused with one of these */
  refuse: Refusal;
  /** statuses the body may be refused with (when the parser is stricter than the model needs) */
  mayRefuse?: number[];
  /** top-level fields as parsed (normalized), when accepted */
  fields?: Record<string, unknown>;
  /** file parts (multipart) */
  files?: { name: string; filename: string }[];
}

const ALLOWED: Record<Kind, number[]> = {
  plain: [200],
  paused: [202],
  enforced: [200],
  guarded: [200, 403, 429],
  sandbox: [200, 402],
};

async function submit(
  target: Target,
  body: Uint8Array,
  headers: Record<string, string>,
  exp: Expectation,
  tally: Tally,
): Promise<void> {
  tally.requests += 1;
  const r = await t.request('POST', `/s/${target.formId}`, {
    body,
    headers: { accept: 'application/json', ...headers },
  });
  tally.add(`${target.kind}:${r.status}`);
  const label = `${target.kind} ${JSON.stringify(headers)}`;
  expectWellFormed(r, label, { serverErrors });
  guard.assertClean();
  const sandboxFiles = target.kind === 'sandbox' && (exp.files?.length ?? 0) > 0;
  if (exp.refuse.size || sandboxFiles) {
    const allowed = new Set<number>([...exp.refuse, ...(exp.mayRefuse ?? []), ...(sandboxFiles ? [413] : [])]);
    expect([...allowed], `${label}: refused → ${r.status} ${r.text}`).toContain(r.status);
    return;
  }
  if (exp.mayRefuse?.includes(r.status)) return;
  expect(ALLOWED[target.kind], `${label}: accepted body → ${r.status} ${r.text}`).toContain(r.status);
  const fields = exp.fields as Record<string, unknown>;
  const ctl = control(fields, target.honeypot);
  const submissionId: string | undefined = r.status < 300 ? r.json.submission_id : r.json.error.details?.submission_id;
  if (!submissionId) return; // a full sandbox stores nothing
  expect(submissionId).toMatch(/^sb_/);

  const idem = idempotencyKey(headerAsSeen(headers['idempotency-key']), ctl.idempotency);
  const slot = idem ? `${target.formId}|${idem}` : null;
  const prior = slot ? byKey.get(slot) : undefined;
  const { data, detail } = await readBack(target, submissionId, tally);
  const fileIds = new Set<string>((detail.attachments ?? []).map((a: { id: string }) => a.id));
  if (r.status < 300 && r.json.attachments) {
    expect([...fileIds].sort(), 'answered attachments are the stored ones').toEqual(
      r.json.attachments.map((a: { id: string }) => a.id).sort(),
    );
  }
  const masked = maskFiles(data, fileIds);
  if (prior) {
    const replay = `${label}: replay of key ${idem} (original ${prior.id})`;
    expect(submissionId, `${replay} answers the original`).toBe(prior.id);
    if (r.status < 300) expect(r.json.idempotent, replay).toBe(true);
    expect(masked, `${replay} reads back as the original`).toEqual(prior.data);
    return;
  }
  if (r.status < 300) expect(r.json.idempotent, `${label}: first use of key ${idem}`).toBeUndefined();
  const expected = maskFiles(ctl.data, new Set());
  // What was stored, recorded before the comparison: a later repeat must answer exactly this (and a
  // shrinking replay of a failed run then fails only for its own reasons).
  if (slot) byKey.set(slot, { id: submissionId, data: masked });
  expect(masked, `${label}: data reads back as sent minus control fields`).toEqual(expected);
  if (exp.files && target.kind !== 'sandbox') {
    expect(fileIds.size, 'one attachment per file part').toBe(exp.files.length);
    // PGlite (not PostgreSQL) decodes text columns with a BOM-stripping TextDecoder.
    const asRead = (f: string) => (t.deps.database.kind === 'pglite' ? f.replace(/^\ufeff/, '') : f);
    const names = detail.attachments.map((a: { field_name: string }) => a.field_name).sort();
    expect(names).toEqual(exp.files.map((f) => asRead(f.name)).sort());
    // Plain names (no path, quote or escape to interpret) must come back exactly, in UTF-8.
    const plainNames = exp.files
      .map((f) => f.filename)
      .filter((f) => /^[^\\/"%\r\n]{1,100}$/u.test(f) && f !== '.')
      .map(asRead);
    const stored = new Set(detail.attachments.map((a: { filename: string }) => a.filename));
    for (const f of plainNames) expect(stored.has(f), `filename ${f} in ${[...stored].join(', ')}`).toBe(true);
  }
  if (target.kind === 'plain' && r.status === 200) {
    expect(r.json.status).toBe(ctl.honeypotFilled ? 'spam' : 'received');
    expect(Array.isArray(r.json.deliveries), `_test → deliveries listed`).toBe(ctl.test);
  }
}

const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/x+json'];

/** What the server must do with a JSON text: refuse it as malformed, refuse it by the limits, or store it. */
function expectJson(text: string, bytes: number): Expectation {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text);
  } catch {
    return { refuse: new Set([400]) };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { refuse: new Set([400]) };
  return { refuse: refusal(parsed, bytes), fields: normalize(parsed) as Record<string, unknown> };
}

describe('POST /s/{formId} fuzz', () => {
  it('JSON objects: odd keys, unicode, nesting, numbers, control fields', async () => {
    const arb = fc.record({
      kind,
      body: jsonObject,
      style: jsonStyle,
      type: fc.constantFrom(...JSON_TYPES),
      headers: submitHeaders,
    });
    await fuzz('intake json objects', 1000, arb, async (v, tally) => {
      const text = writeJson(v.body, v.style);
      const bytes = new TextEncoder().encode(text);
      const target = targets.get(v.kind) as Target;
      await submit(target, bytes, { ...v.headers, 'content-type': v.type }, expectJson(text, bytes.length), tally);
    });
  });

  it('JSON that is not an object, or not JSON', async () => {
    const arb = fc.record({ kind, text: notAnObject, type: fc.constantFrom(...JSON_TYPES) });
    await fuzz('intake json malformed', 300, arb, async (v, tally) => {
      const bytes = new TextEncoder().encode(v.text);
      const target = targets.get(v.kind) as Target;
      await submit(target, bytes, { 'content-type': v.type }, expectJson(v.text, bytes.length), tally);
    });
  });

  it('urlencoded: repeated keys, percent-encoding styles, garbage', async () => {
    const arb = fc.record({
      kind,
      body: fc.oneof(
        {
          weight: 3,
          arbitrary: fc.record({
            pairs: urlPairs,
            style: fc.constantFrom<PctStyle>('component', 'form', 'raw', 'lower', 'all'),
            sep: fc.constantFrom('&', '&&'),
          }),
        },
        { weight: 1, arbitrary: urlGarbage.map((garbage) => ({ garbage })) },
      ),
      charset: fc.constantFrom('', '; charset=utf-8', '; charset=ISO-8859-1', ';charset="UTF-8"'),
      headers: submitHeaders,
    });
    await fuzz('intake urlencoded', 600, arb, async (v, tally) => {
      let bytes: Uint8Array;
      let pairs: [string, string][];
      if ('garbage' in v.body) {
        bytes = new TextEncoder().encode(v.body.garbage);
        pairs = [...new URLSearchParams(new TextDecoder().decode(bytes))];
      } else {
        bytes = urlencodedBytes(v.body.pairs, v.body.style, v.body.sep);
        // UTF-8 on the wire: lone surrogates are U+FFFD before names are grouped.
        pairs = v.body.pairs.map(([k, x]) => [k.toWellFormed(), x.toWellFormed()]);
      }
      const fields = group(pairs);
      const target = targets.get(v.kind) as Target;
      const headers = { ...v.headers, 'content-type': `application/x-www-form-urlencoded${v.charset}` };
      await submit(target, bytes, headers, { refuse: refusal(fields, bytes.length), fields }, tally);
    });
  });

  it('multipart: odd boundaries, names, filenames, preamble and epilogue', async () => {
    const noise = fc.constantFrom('', 'This is a preamble.', '\r\n', '--not-the-boundary');
    const arb = fc.record({
      kind,
      boundary,
      header: multipartHeader,
      parts: fc.array(part, { maxLength: 8 }),
      preamble: noise,
      epilogue: noise,
      headers: submitHeaders,
    });
    await fuzz('intake multipart', 500, arb, async (v, tally) => {
      const delimiter = `--${v.boundary}`;
      fc.pre(![v.preamble, v.epilogue, ...v.parts.map((p) => p.value)].some((s) => s.includes(delimiter)));
      fc.pre(!v.parts.some((p) => p.file && Buffer.from(p.file.bytes).includes(delimiter)));
      const bytes = multipartBytes(v.boundary, v.parts, v.preamble, v.epilogue);
      // Names and values are UTF-8 on the wire, so lone surrogates are U+FFFD before names are grouped.
      const wire = (s: string) => s.toWellFormed();
      const pairs = v.parts.map((p): [string, string] => [
        wire(htmlEscape(p.name)),
        isFilePart(p) ? 'fl_x' : wire(p.file ? '' : p.value),
      ]);
      const files = v.parts
        .filter(isFilePart)
        .map((p) => ({ name: wire(htmlEscape(p.name)), filename: wire(p.file?.filename ?? '') }));
      const fields = group(pairs);
      const masked: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(fields)) {
        put(masked, k, Array.isArray(x) ? x.map((y) => (y === 'fl_x' ? FILE : y)) : x === 'fl_x' ? FILE : x);
      }
      const target = targets.get(v.kind) as Target;
      const headers = { ...v.headers, 'content-type': v.header(v.boundary) };
      // Control characters are not allowed in header values (RFC 9110): busboy refuses such part headers.
      const ctl = (s: string) => [...s].some((c) => (c < ' ' && c !== '\t') || c === '\u007f');
      const mayRefuse = pairs.some(([k]) => ctl(k)) || files.some((f) => ctl(f.filename)) ? [400] : [];
      await submit(target, bytes, headers, { refuse: refusal(fields, 0), mayRefuse, fields: masked, files }, tally);
    });
  });
  it('multipart that is cut, corrupted or framed wrongly', async () => {
    const mutation = fc.oneof(
      fc.record({ cut: fc.nat() }),
      fc.record({ flip: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.constantFrom(
        { header: 'multipart/form-data' },
        { header: 'multipart/form-data; boundary=' },
        { header: 'multipart/form-data; boundary=other' },
        { header: 'multipart/form-data; boundary="unterminated' },
        { header: 'multipart/form-data; boundary=a; boundary=b' },
      ),
      fc.constantFrom({ raw: 'noname' }, { raw: 'nodisposition' }, { raw: 'badheader' }),
    );
    const arb = fc.record({ kind, boundary, parts: fc.array(part, { minLength: 1, maxLength: 4 }), mutation });
    await fuzz('intake multipart mutated', 300, arb, async (v, tally) => {
      let bytes = Buffer.from(multipartBytes(v.boundary, v.parts, '', ''));
      let header = `multipart/form-data; boundary="${v.boundary}"`;
      const m = v.mutation;
      if ('cut' in m) bytes = bytes.subarray(0, m.cut % (bytes.length + 1));
      else if ('flip' in m) bytes[m.flip % bytes.length] = m.byte;
      else if ('header' in m) header = m.header;
      else {
        const b = v.boundary;
        const bad = {
          noname: `--${b}\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n`,
          nodisposition: `--${b}\r\nContent-Type: text/plain\r\n\r\nvalue\r\n`,
          badheader: `--${b}\r\nContent-Disposition form-data; name="x"\r\n\r\nvalue\r\n`,
        }[m.raw];
        bytes = Buffer.concat([Buffer.from(bad), bytes]);
      }
      const target = targets.get(v.kind) as Target;
      tally.requests += 1;
      const r = await t.request('POST', `/s/${target.formId}`, {
        body: new Uint8Array(bytes),
        headers: { accept: 'application/json', 'content-type': header },
      });
      tally.add(`${target.kind}:${r.status}`);
      expectWellFormed(r, `${target.kind} ${JSON.stringify(m)}`, { serverErrors });
      guard.assertClean();
      const id = r.status < 300 ? r.json.submission_id : r.json.error.details?.submission_id;
      if (id) {
        const { data } = await readBack(target, id, tally);
        if (!v.parts.some((p) => p.name === 'undefined')) {
          expect(Object.keys(data as object), 'no field named by a missing name').not.toContain('undefined');
        }
      }
    });
  });

  it('any content type, method, path and headers', async () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        '',
        'application/json',
        'application/json; charset=utf-16',
        'application/vnd.api+json',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        'multipart/mixed; boundary=x',
        'text/plain',
        'text/html',
        'application/xml',
        'application/octet-stream',
        ';',
        'application/json, text/html',
        ' application/json ',
        '*/*',
        '+json',
      ),
      headerValue,
    );
    const body = fc.oneof(
      jsonObject.map((o) => writeJson(o, { indent: '', asciiOnly: false, bom: false })),
      urlGarbage,
      fc.uint8Array({ maxLength: 300 }),
    );
    const path = fc.oneof(
      { weight: 4, arbitrary: kind.map((k) => ({ kind: k })) },
      {
        weight: 1,
        arbitrary: fc
          .oneof(
            fc.constantFrom('fm_00000000000000000000000000', '..', '%2e%2e', ''),
            fc.string().map(encodeURIComponent),
          )
          .map((id) => ({ id })),
      },
    );
    const arb = fc.record({
      path,
      method: fc.constantFrom('POST', 'POST', 'POST', 'POST', 'OPTIONS', 'GET', 'PUT', 'DELETE', 'PATCH'),
      contentType: fc.option(contentType),
      accept: fc.option(
        fc.oneof(fc.constantFrom('application/json', 'text/html', '*/*', 'application/json, text/html'), headerValue),
      ),
      body,
      headers: submitHeaders,
    });
    await fuzz('intake headers and content types', 500, arb, async (v, tally) => {
      const target = 'kind' in v.path ? (targets.get(v.path.kind) as Target) : null;
      const url = `/s/${'id' in v.path ? v.path.id : (target as Target).formId}`;
      const headers: Record<string, string> = { ...v.headers };
      if (v.contentType !== null) headers['content-type'] = v.contentType;
      if (v.accept !== null) headers.accept = v.accept;
      const bytes = typeof v.body === 'string' ? new TextEncoder().encode(v.body) : v.body;
      const withBody = v.method !== 'GET' && v.method !== 'OPTIONS';
      tally.requests += 1;
      const r = await t.request(v.method, url, { body: withBody ? bytes : undefined, headers });
      tally.add(`${target?.kind ?? 'unknown'}:${v.method}:${r.status}`);
      expectWellFormed(r, `${v.method} ${url} ${JSON.stringify(headers)}`, { redirect: true, serverErrors });
      guard.assertClean();
      const media = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const accepted =
        media === 'application/json' ||
        media.endsWith('+json') ||
        media === 'application/x-www-form-urlencoded' ||
        media === 'multipart/form-data';
      if (target && v.method === 'POST' && !accepted) expect(r.status, r.text).toBe(415);
      const id = r.status < 300 ? r.json?.submission_id : r.json?.error?.details?.submission_id;
      if (target && id) await readBack(target, id, tally);
    });
  });
});
