import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMapping, checkMapping, missingFields, pickSource } from '../../server/streams/mapping.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { tenants } from '../helpers/tenant.js';

const SCHEMA = {
  type: 'object',
  required: ['customer_name', 'email'],
  properties: {
    customer_name: { type: 'string' },
    email: { type: 'string' },
    channel: { type: 'string' },
    country: { type: 'string' },
  },
};
const MAPPING = {
  customer_name: { from: 'fullName' },
  email: { from: 'email' },
  channel: { const: 'web' },
  country: { from: 'cty', default: 'NL' },
};

describe('mappings', () => {
  it('maps from, const and default; unmapped fields go to extras', () => {
    expect(applyMapping(MAPPING, { fullName: 'Ada', email: 'a@x.io', note: 'hi' })).toEqual({
      data: { customer_name: 'Ada', email: 'a@x.io', channel: 'web', country: 'NL' },
      extras: { note: 'hi' },
    });
    // A blank value takes the default; a present one wins over it.
    expect(applyMapping(MAPPING, { fullName: 'B', cty: '' }).data.country).toBe('NL');
    expect(applyMapping(MAPPING, { fullName: 'B', cty: 'DE' }).data.country).toBe('DE');
    // An absent field without a default is left out rather than invented.
    expect(applyMapping({ email: { from: 'email' } }, {}).data).toEqual({});
  });

  it('lists required stream fields no entry covers', () => {
    expect(missingFields({ customer_name: { from: 'n' } }, SCHEMA)).toEqual(['email']);
    expect(missingFields(MAPPING, SCHEMA)).toEqual([]);
  });

  it('refuses expr, entries with no or two kinds, unknown stream keys and undeclared form fields', () => {
    expect(() => checkMapping({ email: { expr: 'x' } }, SCHEMA, null, 'm')).toThrow(/reserved/);
    const issues = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        return (err as { details: { issues: { path: string }[] } }).details.issues.map((i) => i.path);
      }
      return [];
    };
    expect(issues(() => checkMapping({ email: {} }, SCHEMA, null, 'm'))).toEqual(['m.email']);
    expect(issues(() => checkMapping({ email: { from: 'a', const: 'b' } }, SCHEMA, null, 'm'))).toEqual(['m.email']);
    expect(issues(() => checkMapping({ nope: { from: 'a' } }, SCHEMA, null, 'm'))).toEqual(['m.nope']);
    expect(issues(() => checkMapping({ email: { from: 'mail' } }, SCHEMA, ['email'], 'm'))).toEqual(['m.email.from']);
    expect(issues(() => checkMapping({ email: { from: 'email' } }, SCHEMA, ['email'], 'm'))).toEqual([]);
  });

  it('an explicit form source wins over selectors; among selectors the oldest', () => {
    const form = { id: 'fm_1', tags: ['a', 'b'], projectId: 'prj_1' };
    const sources = [
      { id: 'src_3', formId: null, selector: 'tag:b' },
      { id: 'src_2', formId: null, selector: 'project:prj_1' },
      { id: 'src_9', formId: 'fm_1', selector: null },
    ];
    expect(pickSource(sources, form)?.id).toBe('src_9');
    expect(pickSource(sources.slice(0, 2), form)?.id).toBe('src_2');
    expect(pickSource(sources.slice(0, 2), { ...form, tags: [], projectId: 'prj_2' })).toBeUndefined();
  });
});

let t: TestEnv;
let key: string;
let readKey: string;
let otherKey: string;
let ip = 0;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  t = await startTestApp({ RETRY_BASE_MS: '20' });
  ({ key, readKey, otherKey } = await tenants(t));
});
afterAll(async () => {
  for (const c of closers) await c();
  await t.close();
});

const uid = () => crypto.randomUUID().slice(0, 8);
const names = () => {
  const u = uid();
  return { name: `Stream ${u}`, slug: `stream-${u}` };
};

async function form(json: Record<string, unknown> = {}, k = key) {
  const r = await t.api('POST', '/v1/forms', k, { json: { name: `F ${uid()}`, ...json } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; streams: unknown[]; project_id: string; current_schema_version: number | null };
}

async function stream(body: Record<string, unknown>, k = key) {
  const r = await t.api('POST', '/v1/streams', k, { json: { ...names(), ...body } });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

async function webhookRoute(json: Record<string, unknown>, url = 'https://hooks.example.com/x') {
  const dest = await t.api('POST', '/v1/destinations', key, { json: { type: 'webhook', name: 'h', config: { url } } });
  expect(dest.status, dest.text).toBe(201);
  const route = await t.api('POST', '/v1/routes', key, { json: { ...json, destination_id: dest.json.id } });
  expect(route.status, route.text).toBe(201);
  return route.json as { id: string };
}

async function submit(formId: string, data: Record<string, unknown>) {
  ip += 1;
  const r = await t.request('POST', `/s/${formId}`, {
    json: data,
    headers: { accept: 'application/json', 'x-forwarded-for': `198.51.100.${ip % 250}` },
  });
  expect(r.status, r.text).toBe(200);
  return r.json as { submission_id: string };
}

async function deliveriesOf(submissionId: string) {
  const r = await t.api('GET', `/v1/deliveries?submission_id=${submissionId}`, key);
  expect(r.status).toBe(200);
  return r.json.data as { route_id: string; schema_version: number | null; payload: any }[];
}

const detail = async (id: string) => (await t.api('GET', `/v1/streams/${id}`, key)).json;

describe('streams API', () => {
  it('creates a stream with schema v1 and sources, shown in StreamDetail and in Form.streams', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    expect(s).toMatchObject({
      current_schema_version: 1,
      counts: { sources: 1, routes: 0, submissions_30d: 0 },
      schema: { version: 1, json_schema: SCHEMA },
      routes: [],
      form_template: { json_schema: SCHEMA },
    });
    expect(s.id).toMatch(/^st_/);
    expect(s.sources).toEqual([
      expect.objectContaining({
        form_id: f.id,
        selector: null,
        mapping: MAPPING,
        mapping_status: 'valid',
        missing: [],
        stream_schema_version: 1,
      }),
    ]);
    const got = (await t.api('GET', `/v1/forms/${f.id}`, key)).json;
    expect(got.streams).toEqual([{ id: s.id, slug: s.slug, mapping_status: 'valid' }]);
    const listed = (await t.api('GET', '/v1/forms?limit=200', key)).json.data.find(
      (x: { id: string }) => x.id === f.id,
    );
    expect(listed.streams).toEqual(got.streams);
    const list = (await t.api('GET', '/v1/streams', readKey)).json;
    expect(list.data.map((x: { id: string }) => x.id)).toContain(s.id);
    const events = await t.deps.database.rows<{ subject: { stream_id: string } }>(
      sql`select subject from events where type = 'stream.schema.changed'`,
    );
    expect(events.some((e) => e.subject.stream_id === s.id)).toBe(true);
  });

  it('if_exists "return" answers the existing stream; otherwise the slug is a 409', async () => {
    const n = names();
    const a = await stream({ ...n, schema: { json_schema: SCHEMA } });
    const again = await t.api('POST', '/v1/streams', key, {
      json: { ...n, schema: { json_schema: SCHEMA }, if_exists: 'return' },
    });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(a.id);
    const clash = await t.api('POST', '/v1/streams', key, { json: { ...n, schema: { json_schema: SCHEMA } } });
    expect(clash.status).toBe(409);
    expect(clash.json.error).toMatchObject({ code: 'conflict', details: { existing_id: a.id } });
    expect(clash.json.error.hint).toBeTruthy();
  });

  it('answers bad input with precise 422s and nothing created', async () => {
    const f = await form();
    const create = (body: Record<string, unknown>) =>
      t.api('POST', '/v1/streams', key, { json: { ...names(), ...body } });
    const before = (await t.api('GET', '/v1/streams?limit=200', key)).json.data.length;

    const expr = await create({
      schema: { json_schema: SCHEMA },
      sources: [{ form_id: f.id, mapping: { ...MAPPING, customer_name: { expr: 'a + b' } } }],
    });
    expect(expr.status).toBe(422);
    expect(expr.json.error.code).toBe('expressions_not_enabled');

    const incomplete = await create({
      schema: { json_schema: SCHEMA },
      sources: [{ form_id: f.id, mapping: { customer_name: { from: 'fullName' } } }],
    });
    expect(incomplete.status).toBe(422);
    expect(incomplete.json.error).toMatchObject({ code: 'mapping_incomplete', details: { missing: ['email'] } });
    expect(incomplete.json.error.hint).toMatch(/email/);

    const unknownKey = await create({
      schema: { json_schema: SCHEMA },
      sources: [{ form_id: f.id, mapping: { ...MAPPING, phone: { from: 'tel' } } }],
    });
    expect(unknownKey.status).toBe(422);
    expect(unknownKey.json.error.code).toBe('validation_failed');

    const both = await create({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, selector: 'tag:x' }] });
    expect(both.status).toBe(422);
    expect(both.json.error.code).toBe('validation_failed');

    const badSelector = await create({ schema: { json_schema: SCHEMA }, sources: [{ selector: 'color:red' }] });
    expect(badSelector.status).toBe(422);

    const noProject = await create({
      schema: { json_schema: SCHEMA },
      sources: [{ selector: 'project:prj_doesnotexist', mapping: MAPPING }],
    });
    expect(noProject.status).toBe(422);
    expect(noProject.json.error.code).toBe('validation_failed');

    const noSchema = await create({});
    expect(noSchema.status).toBe(422);
    expect(noSchema.json.error.code).toBe('stream_schema_missing');
    // A source without a schema cannot provide one either.
    const noSourceSchema = await create({ sources: [{ form_id: f.id, mapping: MAPPING }] });
    expect(noSourceSchema.json.error.code).toBe('stream_schema_missing');

    for (const json_schema of [{ type: 'array' }, { type: 'object', properties: { a: { type: 'nope' } } }]) {
      const r = await create({ schema: { json_schema } });
      expect(r.status, JSON.stringify(json_schema)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
    const notObject = await create({ schema: { json_schema: [] } });
    expect(notObject.status).toBe(422);

    const otherForm = await form({}, otherKey);
    const foreign = await create({
      schema: { json_schema: SCHEMA },
      sources: [{ form_id: otherForm.id, mapping: MAPPING }],
    });
    expect(foreign.status).toBe(404);

    expect((await t.api('GET', '/v1/streams?limit=200', key)).json.data.length).toBe(before);
  });

  it('checks from against the form schema when the form declares fields', async () => {
    const f = await form();
    const pub = await t.api('POST', `/v1/forms/${f.id}/schema`, key, {
      json: {
        json_schema: { type: 'object', properties: { fullName: { type: 'string' }, email: { type: 'string' } } },
      },
    });
    expect(pub.status).toBe(201);
    const s = await stream({ schema: { json_schema: SCHEMA } });
    const typo = await t.api('POST', `/v1/streams/${s.id}/sources`, key, {
      json: { form_id: f.id, mapping: { customer_name: { from: 'full_name' }, email: { from: 'email' } } },
    });
    expect(typo.status).toBe(422);
    expect(typo.json.error.details.issues[0].path).toBe('source.mapping.customer_name.from');
    const ok = await t.api('POST', `/v1/streams/${s.id}/sources`, key, {
      json: { form_id: f.id, mapping: { customer_name: { from: 'fullName' }, email: { from: 'email' } } },
    });
    expect(ok.status).toBe(201);
    expect(ok.json.data[0]).toMatchObject({ form_id: f.id, mapping_status: 'valid' });
  });

  it('without a schema, version 1 comes from the first source form that has one', async () => {
    const f = await form();
    await t.api('POST', `/v1/forms/${f.id}/schema`, key, {
      json: { json_schema: SCHEMA, ui: { email: { label: 'Email' } } },
    });
    const s = await stream({ sources: [{ form_id: f.id }] });
    expect(s.schema).toMatchObject({ version: 1, json_schema: SCHEMA, ui: { email: { label: 'Email' } } });
    // Omitted mapping: identity over the stream fields the form declares.
    expect(s.sources[0].mapping).toEqual({
      customer_name: { from: 'customer_name' },
      email: { from: 'email' },
      channel: { from: 'channel' },
      country: { from: 'country' },
    });
  });

  it('keeps tenants apart and read keys read-only', async () => {
    const s = await stream({ schema: { json_schema: SCHEMA } });
    for (const path of [`/v1/streams/${s.id}`, `/v1/streams/${s.id}/schema`, `/v1/streams/${s.id}/preview`]) {
      expect((await t.api('GET', path, otherKey)).status, path).toBe(404);
    }
    expect((await t.api('DELETE', `/v1/streams/${s.id}`, otherKey)).status).toBe(404);
    expect(
      (await t.api('POST', `/v1/routes`, otherKey, { json: { stream_id: s.id, destination_id: 'ds_x' } })).status,
    ).toBe(404);
    expect((await t.api('GET', `/v1/streams/${s.id}`, readKey)).status).toBe(200);
    expect((await t.api('POST', `/v1/streams/${s.id}/schema`, readKey, { json: { json_schema: SCHEMA } })).status).toBe(
      403,
    );
  });

  it('PATCH renames; DELETE removes the stream, its routes and sources', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    const route = await webhookRoute({ stream_id: s.id });
    const renamed = await t.api('PATCH', `/v1/streams/${s.id}`, key, { json: { name: 'Leads' } });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ name: 'Leads', slug: s.slug });
    expect((await t.api('DELETE', `/v1/streams/${s.id}`, key)).status).toBe(204);
    expect((await t.api('GET', `/v1/streams/${s.id}`, key)).status).toBe(404);
    expect((await t.api('GET', `/v1/routes/${route.id}`, key)).status).toBe(404);
    expect((await t.api('GET', `/v1/forms/${f.id}`, key)).json.streams).toEqual([]);
    // The form keeps working, with nothing planned for the gone stream.
    const sub = await submit(f.id, { fullName: 'After', email: 'a@example.com' });
    expect(await deliveriesOf(sub.submission_id)).toEqual([]);
  });

  it('refuses digest mode on a stream route', async () => {
    const s = await stream({ schema: { json_schema: SCHEMA } });
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'h', config: { url: 'https://hooks.example.com/d' } },
    });
    const r = await t.api('POST', '/v1/routes', key, {
      json: {
        stream_id: s.id,
        destination_id: dest.json.id,
        mode: { type: 'digest', cron: '0 9 * * *', timezone: 'UTC' },
      },
    });
    expect(r.status).toBe(422);
    expect(r.json.error.details.issues[0].path).toBe('mode');
  });
});

describe('stream routes at intake', () => {
  it('plans a mapped delivery with extras, stream and schema_version beside the form route', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    const streamRoute = await webhookRoute({ stream_id: s.id });
    const formRoute = await webhookRoute({ form_id: f.id });
    const sub = await submit(f.id, { fullName: 'Ada L', email: 'ada@example.com', note: 'hi' });
    const ds = await deliveriesOf(sub.submission_id);
    expect(ds).toHaveLength(2);
    const viaStream = ds.find((d) => d.route_id === streamRoute.id);
    const direct = ds.find((d) => d.route_id === formRoute.id);
    expect(viaStream?.schema_version).toBe(1);
    expect(viaStream?.payload).toMatchObject({
      schema_version: 1,
      stream: { id: s.id, slug: s.slug },
      form: { id: f.id },
      data: { customer_name: 'Ada L', email: 'ada@example.com', channel: 'web', country: 'NL' },
      extras: { note: 'hi' },
    });
    expect(viaStream?.payload.data).not.toHaveProperty('fullName');
    expect(direct?.schema_version).toBeNull();
    expect(direct?.payload).toMatchObject({
      stream: null,
      data: { fullName: 'Ada L', email: 'ada@example.com', note: 'hi' },
    });
    const counts = (await detail(s.id)).counts;
    expect(counts).toEqual({ sources: 1, routes: 1, submissions_30d: 1 });
  });

  it('a tag selector picks up forms tagged later; an explicit source wins over the selector', async () => {
    const tag = `t-${uid()}`;
    const s = await stream({
      schema: { json_schema: SCHEMA },
      sources: [{ selector: `tag:${tag}`, mapping: { customer_name: { from: 'name' }, email: { from: 'mail' } } }],
    });
    const route = await webhookRoute({ stream_id: s.id });
    const later = await form({ tags: [tag] });
    const a = await submit(later.id, { name: 'Tagged', mail: 'x@example.com' });
    const [d] = await deliveriesOf(a.submission_id);
    expect(d.route_id).toBe(route.id);
    expect(d.payload.data).toEqual({ customer_name: 'Tagged', email: 'x@example.com' });
    expect((await t.api('GET', `/v1/forms/${later.id}`, key)).json.streams).toEqual([
      { id: s.id, slug: s.slug, mapping_status: 'valid' },
    ]);

    const explicit = await t.api('POST', `/v1/streams/${s.id}/sources`, key, {
      json: {
        sources: [{ form_id: later.id, mapping: { customer_name: { const: 'Fixed' }, email: { from: 'mail' } } }],
      },
    });
    expect(explicit.status).toBe(201);
    const b = await submit(later.id, { name: 'Ignored', mail: 'y@example.com' });
    const [d2] = await deliveriesOf(b.submission_id);
    expect(d2.payload.data).toEqual({ customer_name: 'Fixed', email: 'y@example.com' });
    expect(d2.payload.extras).toEqual({ name: 'Ignored' });

    // An untagged form of the same organization feeds nothing.
    const other = await form();
    expect(await deliveriesOf((await submit(other.id, { name: 'No' })).submission_id)).toEqual([]);
  });

  it('a project selector matches every form of the project; a selector matching nothing is accepted', async () => {
    const f = await form({ project: `p-${uid()}` });
    const s = await stream({
      schema: { json_schema: SCHEMA },
      sources: [
        { selector: `project:${f.project_id}`, mapping: MAPPING },
        { selector: `tag:nobody-${uid()}`, mapping: MAPPING },
      ],
    });
    await webhookRoute({ stream_id: s.id });
    const sub = await submit(f.id, { fullName: 'P', email: 'p@example.com' });
    expect((await deliveriesOf(sub.submission_id))[0].payload.stream).toEqual({ id: s.id, slug: s.slug });
    expect((await detail(s.id)).counts.sources).toBe(2);
  });

  it('publishing re-validates mappings; a planned delivery keeps the version and data it was planned with', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    await webhookRoute({ stream_id: s.id });
    const before = await submit(f.id, { fullName: 'V1', email: 'v1@example.com', phone: '1' });

    const v2 = {
      ...SCHEMA,
      required: [...SCHEMA.required, 'phone'],
      properties: { ...SCHEMA.properties, phone: { type: 'string' } },
    };
    const pub = await t.api('POST', `/v1/streams/${s.id}/schema`, key, {
      json: { json_schema: v2, changelog: 'phone' },
    });
    expect(pub.status).toBe(201);
    expect(pub.json).toMatchObject({ version: 2, changelog: 'phone' });
    const d = await detail(s.id);
    expect(d.current_schema_version).toBe(2);
    expect(d.sources[0]).toMatchObject({ mapping_status: 'incomplete', missing: ['phone'], stream_schema_version: 2 });
    expect((await t.api('GET', `/v1/forms/${f.id}`, key)).json.streams[0].mapping_status).toBe('incomplete');
    expect((await t.api('GET', `/v1/streams/${s.id}/schema`, key)).json.version).toBe(2);

    const [old] = await deliveriesOf(before.submission_id);
    expect(old.schema_version).toBe(1);
    expect(old.payload.data).not.toHaveProperty('phone');
    expect(old.payload.extras).toEqual({ phone: '1' });

    // Completing the mapping makes it valid again; new submissions are planned against version 2.
    const fix = await t.api('POST', `/v1/streams/${s.id}/sources`, key, {
      json: { form_id: f.id, mapping: { ...MAPPING, phone: { from: 'phone' } } },
    });
    expect(fix.status).toBe(201);
    expect(fix.json.data[0]).toMatchObject({ mapping_status: 'valid', stream_schema_version: 2 });
    const after = await submit(f.id, { fullName: 'V2', email: 'v2@example.com', phone: '2' });
    const [now] = await deliveriesOf(after.submission_id);
    expect(now.schema_version).toBe(2);
    expect(now.payload.data).toMatchObject({ customer_name: 'V2', phone: '2' });

    const changed = await t.deps.database.rows<{ data: { version: number; sources: unknown } }>(
      sql`select data from events where type = 'stream.schema.changed' and subject->>'stream_id' = ${s.id} order by id`,
    );
    expect(changed.map((e) => e.data.version)).toEqual([1, 2]);
    expect(changed[1].data.sources).toEqual({ valid: 0, incomplete: 1 });
  });

  it('publish without json_schema copies a source form’s schema, or answers stream_schema_missing', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    const missing = await t.api('POST', `/v1/streams/${s.id}/schema`, key, { json: {} });
    expect(missing.status).toBe(422);
    expect(missing.json.error.code).toBe('stream_schema_missing');
    await t.api('POST', `/v1/forms/${f.id}/schema`, key, { json: { json_schema: SCHEMA } });
    const copied = await t.api('POST', `/v1/streams/${s.id}/schema`, key, { json: { from_form_id: f.id } });
    expect(copied.status).toBe(201);
    expect(copied.json).toMatchObject({ version: 2, json_schema: SCHEMA });
  });

  it('detaching a source stops its deliveries; an unknown source id is a 404', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    await webhookRoute({ stream_id: s.id });
    const sourceId = s.sources[0].id;
    expect((await t.api('DELETE', `/v1/streams/${s.id}/sources/src_nope`, key)).status).toBe(404);
    expect((await t.api('DELETE', `/v1/streams/${s.id}/sources/${sourceId}`, key)).status).toBe(204);
    expect((await t.api('GET', `/v1/streams/${s.id}/sources`, key)).json.data).toEqual([]);
    const sub = await submit(f.id, { fullName: 'Gone', email: 'g@example.com' });
    expect(await deliveriesOf(sub.submission_id)).toEqual([]);
  });

  it('preview maps recent received submissions through the current mapping', async () => {
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    await submit(f.id, { fullName: 'First', email: 'a@example.com' });
    await submit(f.id, { fullName: 'Second', email: 'b@example.com', cty: 'BE', extra: 1 });
    const r = await t.api('GET', `/v1/streams/${s.id}/preview?limit=1`, key);
    expect(r.status).toBe(200);
    expect(r.json.schema_version).toBe(1);
    expect(r.json.data).toEqual([
      expect.objectContaining({
        form_id: f.id,
        source_id: s.sources[0].id,
        data: { customer_name: 'Second', email: 'b@example.com', channel: 'web', country: 'BE' },
        extras: { extra: 1 },
        mapping_status: 'valid',
      }),
    ]);
    expect((await t.api('GET', `/v1/streams/${s.id}/preview?limit=0`, key)).status).toBe(422);
  });

  it('from_template creates a form with the stream schema as v1, attached with a valid mapping', async () => {
    const s = await stream({ schema: { json_schema: SCHEMA, ui: { email: { label: 'Your email' } } } });
    const created = await form({ from_template: s.id });
    expect(created.current_schema_version).toBe(1);
    expect(created.streams).toEqual([{ id: s.id, slug: s.slug, mapping_status: 'valid' }]);
    const schema = (await t.api('GET', `/v1/forms/${created.id}/schema`, key)).json;
    expect(schema).toMatchObject({ version: 1, json_schema: SCHEMA, ui: { email: { label: 'Your email' } } });
    expect((await detail(s.id)).sources[0]).toMatchObject({ form_id: created.id, mapping_status: 'valid' });
    const unknown = await t.api('POST', '/v1/forms', key, { json: { name: `F ${uid()}`, from_template: 'st_nope' } });
    expect(unknown.status).toBe(404);
    // Deleting the form removes its source.
    expect((await t.api('DELETE', `/v1/forms/${created.id}`, key)).status).toBe(204);
    expect((await detail(s.id)).sources).toEqual([]);
  });

  it('the worker sends the mapped payload to a stream route webhook', async () => {
    await t.startWorker();
    const hook = await startReceiver();
    closers.push(hook.close);
    const f = await form();
    const s = await stream({ schema: { json_schema: SCHEMA }, sources: [{ form_id: f.id, mapping: MAPPING }] });
    await webhookRoute({ stream_id: s.id }, hook.url);
    await submit(f.id, { fullName: 'Sent', email: 's@example.com', cty: 'FR' });
    const [req] = await hook.waitFor((r) => r.length > 0, 15_000);
    expect(req.json).toMatchObject({
      schema_version: 1,
      stream: { id: s.id, slug: s.slug },
      data: { customer_name: 'Sent', email: 's@example.com', channel: 'web', country: 'FR' },
      extras: {},
    });
  });
});
