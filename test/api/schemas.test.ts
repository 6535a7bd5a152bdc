import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createForm } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp();
let ipSeq = 0;

const contact = {
  type: 'object',
  required: ['email'],
  properties: { email: { type: 'string', format: 'email' }, message: { type: 'string', maxLength: 20 } },
};
const contactV2 = { ...contact, required: ['email', 'message'] };

const publish = (formId: string, json: unknown, k = key) => t.api('POST', `/v1/forms/${formId}/schema`, k, { json });

const setMode = async (formId: string, schema_mode: string) =>
  expect((await t.api('PATCH', `/v1/forms/${formId}`, key, { json: { schema_mode } })).status).toBe(200);

const post = (formId: string, json: unknown) => {
  ipSeq += 1;
  return t.request('POST', `/s/${formId}`, { json, headers: { 'x-forwarded-for': `198.51.100.${ipSeq}` } });
};

const detail = async (id: string) => (await t.api('GET', `/v1/submissions/${id}`, key)).json;

describe('form schemas', () => {
  it('publishes immutable versions: v1 then v2, current moves, v1 stays readable', async () => {
    const formId = await createForm(t, key);
    const none = await t.api('GET', `/v1/forms/${formId}/schema`, key);
    expect(none.status).toBe(404);
    expect(none.json.error.hint).toContain(`POST /v1/forms/${formId}/schema`);

    const ui = { email: { label: 'Email', placeholder: 'you@example.com', order: 1, widget: 'email' } };
    const v1 = await publish(formId, { json_schema: contact, ui, changelog: 'first' });
    expect(v1.status).toBe(201);
    expect(v1.json).toMatchObject({ version: 1, json_schema: contact, ui, changelog: 'first', inferred: false });
    expect(v1.json.created_by).toMatch(/^key_/);
    expect(v1.json.created_at).toMatch(/Z$/);

    const v2 = await publish(formId, { json_schema: contactV2 });
    expect(v2.status).toBe(201);
    expect(v2.json).toMatchObject({ version: 2, json_schema: contactV2, ui: {}, changelog: '' });

    const current = await t.api('GET', `/v1/forms/${formId}/schema`, readKey);
    expect(current.status).toBe(200);
    expect(current.json).toEqual(v2.json);
    expect((await t.api('GET', `/v1/forms/${formId}`, key)).json.current_schema_version).toBe(2);

    const versions = await t.api('GET', `/v1/forms/${formId}/schema/versions`, readKey);
    expect(versions.status).toBe(200);
    expect(versions.json.data).toEqual([v2.json, v1.json]);
    expect(versions.json.next_cursor).toBeNull();

    // Paged one at a time, newest first.
    const p1 = await t.api('GET', `/v1/forms/${formId}/schema/versions?limit=1`, key);
    expect(p1.json.data.map((v: { version: number }) => v.version)).toEqual([2]);
    const p2 = await t.api('GET', `/v1/forms/${formId}/schema/versions?limit=1&cursor=${p1.json.next_cursor}`, key);
    expect(p2.json.data).toEqual([v1.json]);
    expect(p2.json.next_cursor).toBeNull();
    const bad = await t.api('GET', `/v1/forms/${formId}/schema/versions?cursor=nonsense`, key);
    expect(bad.status).toBe(422);

    // No operation edits or deletes a version.
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      expect((await t.api(method, `/v1/forms/${formId}/schema`, key, { json: { json_schema: {} } })).status).toBe(405);
    }
    const stored = await t.deps.database.rows(
      sql`select version, json_schema from form_schemas where form_id = ${formId} order by version`,
    );
    expect(stored.map((r: any) => [Number(r.version), r.json_schema])).toEqual([
      [1, contact],
      [2, contactV2],
    ]);
  });

  it('appends form.schema.changed with the version and changelog', async () => {
    const formId = await createForm(t, key);
    expect((await publish(formId, { json_schema: contact, changelog: 'adds email' })).status).toBe(201);
    const rows = await t.deps.database.rows(
      sql`select subject, data from events where type = 'form.schema.changed' and subject->>'form_id' = ${formId}`,
    );
    expect(rows).toEqual([{ subject: { form_id: formId }, data: { version: 1, changelog: 'adds email' } }]);
  });

  it('refuses a schema that does not compile with the compiler message, and publishes nothing', async () => {
    const formId = await createForm(t, key);
    const r = await publish(formId, { json_schema: { type: 'nonsense' } });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('validation_failed');
    expect(r.json.error.hint).toBeTruthy();
    expect(r.json.error.details.issues[0].path).toBe('json_schema');
    expect(r.json.error.details.issues[0].message).toContain('must be equal to one of the allowed values');

    const remote = await publish(formId, { json_schema: { $ref: 'https://schemas.example.com/contact.json' } });
    expect(remote.status).toBe(422);
    expect(remote.json.error.details.issues[0].message).toContain(
      'remote $ref https://schemas.example.com/contact.json',
    );

    const regex = await publish(formId, { json_schema: { type: 'object', properties: { a: { pattern: '(' } } } });
    expect(regex.status).toBe(422);
    expect(regex.json.error.message).toMatch(/does not compile/);

    const notObject = await publish(formId, { json_schema: [] });
    expect(notObject.status).toBe(422);
    const arrayRoot = await publish(formId, { json_schema: { type: ['array', 'null'] } });
    expect(arrayRoot.json.error.details.issues[0].path).toBe('json_schema.type');
    const draft04 = await publish(formId, { json_schema: { $schema: 'http://json-schema.org/draft-04/schema#' } });
    expect(draft04.status).toBe(422);
    expect(draft04.json.error.message).toMatch(/draft-04/);
    const loop = await publish(formId, { json_schema: { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' } });
    expect(loop.status).toBe(422);
    expect(loop.json.error.message).toMatch(/loop without reaching a schema/);
    let deep: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 2000; i += 1) deep = { type: 'object', properties: { x: deep } };
    const tooDeep = await publish(formId, { json_schema: deep });
    expect(tooDeep.status).toBe(422);
    expect(tooDeep.json.error.message).toMatch(/nests too deeply/);
    const extra = await publish(formId, { json_schema: contact, changelog: 'x'.repeat(2001) });
    expect(extra.status).toBe(422);
    const unknownHint = await publish(formId, { json_schema: contact, ui: { email: { colour: 'red' } } });
    expect(unknownHint.status).toBe(422);

    expect((await t.api('GET', `/v1/forms/${formId}`, key)).json.current_schema_version).toBeNull();
    expect((await t.api('GET', `/v1/forms/${formId}/schema/versions`, key)).json.data).toEqual([]);
  });

  it('compiles each tenant’s schema on its own: the same $id in two organizations does not clash', async () => {
    const withId = (type: string) => ({
      $id: 'https://example.com/contact',
      type: 'object',
      properties: { zip: { $ref: 'https://example.com/zip' } },
      $defs: { zip: { $id: 'https://example.com/zip', type } },
    });
    const a = await createForm(t, key);
    const b = await createForm(t, otherKey);
    expect((await publish(a, { json_schema: withId('string') })).status).toBe(201);
    expect((await publish(b, { json_schema: withId('number') }, otherKey)).status).toBe(201);
    await setMode(a, 'enforce');
    expect((await t.api('PATCH', `/v1/forms/${b}`, otherKey, { json: { schema_mode: 'enforce' } })).status).toBe(200);
    expect((await post(a, { zip: '75001' })).json.status).toBe('received');
    expect((await post(a, { zip: 75001 })).json.status).toBe('quarantined');
    expect((await post(b, { zip: 75001 })).json.status).toBe('received');
    expect((await post(b, { zip: '75001' })).json.status).toBe('quarantined');
    // A relative $ref to the other tenant's subschema id resolves nowhere.
    const borrowing = await publish(b, { json_schema: { $id: 'https://example.com/b', $ref: 'zip' } }, otherKey);
    expect(borrowing.status).toBe(422);
    expect(borrowing.json.error.details.issues[0].message).toContain("can't resolve reference zip");
  });

  it('enforce: a violating post is stored quarantined/schema_violation with issues; a valid one received', async () => {
    const formId = await createForm(t, key);
    await publish(formId, { json_schema: contact });
    await publish(formId, { json_schema: contactV2 });
    await setMode(formId, 'enforce');

    const bad = await post(formId, { email: 'not-an-email', message: 'this message is far too long' });
    expect(bad.status).toBe(200);
    expect(bad.json).toMatchObject({ ok: false, status: 'quarantined' });
    const s = await detail(bad.json.submission_id);
    expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'schema_violation', form_schema_version: 2 });
    expect(s.data).toEqual({ email: 'not-an-email', message: 'this message is far too long' });
    expect(s.issues).toEqual(
      expect.arrayContaining([
        { path: 'email', message: 'must match format "email"' },
        { path: 'message', message: 'must NOT have more than 20 characters' },
      ]),
    );
    const missing = await post(formId, { email: 'ada@example.com' });
    expect((await detail(missing.json.submission_id)).issues).toEqual([
      { path: 'message', message: "must have required property 'message'" },
    ]);

    const good = await post(formId, { email: 'ada@example.com', message: 'Hello' });
    expect(good.json).toMatchObject({ ok: true, status: 'received' });
    const g = await detail(good.json.submission_id);
    expect(g).toMatchObject({ status: 'received', quarantine_reason: null, form_schema_version: 2, issues: null });

    const quarantined = await t.deps.database.rows(
      sql`select count(*)::int as n from events where type = 'submission.quarantined' and subject->>'form_id' = ${formId}`,
    );
    expect(Number(quarantined[0].n)).toBe(2);
  });

  it('a catastrophic tenant pattern cannot hold the server: the post is judged and stored at once', async () => {
    const formId = await createForm(t, key);
    const json_schema = {
      type: 'object',
      properties: {
        name: { type: 'string', pattern: '^(a+)+$' },
        code: { type: 'string', pattern: '^(?=[A-Z])([A-Z0-9]+)+$' },
      },
    };
    expect((await publish(formId, { json_schema })).status).toBe(201);
    await setMode(formId, 'enforce');
    const evil = `${'a'.repeat(40)}!`;
    const bad = await post(formId, { name: evil, code: `${'A'.repeat(40)}!` });
    expect(bad.json).toMatchObject({ ok: false, status: 'quarantined' });
    const stored = await detail(bad.json.submission_id);
    expect(stored.data.name).toBe(evil);
    expect(stored.issues).toEqual(
      expect.arrayContaining([
        { path: 'name', message: 'must match pattern "^(a+)+$"' },
        { path: 'code', message: 'must match pattern "^(?=[A-Z])([A-Z0-9]+)+$"' },
      ]),
    );
    const good = await post(formId, { name: 'aaaa', code: 'AB12' });
    expect(good.json).toMatchObject({ ok: true, status: 'received' });
  });

  it('managed validates like enforce; observe never blocks', async () => {
    const managed = await createForm(t, key);
    await publish(managed, { json_schema: contactV2 });
    await setMode(managed, 'managed');
    const m = await post(managed, { email: 'nope' });
    expect(m.json.status).toBe('quarantined');
    expect((await detail(m.json.submission_id)).quarantine_reason).toBe('schema_violation');

    const observed = await createForm(t, key);
    await publish(observed, { json_schema: contactV2 });
    const o = await post(observed, { email: 'nope' });
    expect(o.json).toMatchObject({ ok: true, status: 'received' });
    expect(await detail(o.json.submission_id)).toMatchObject({ status: 'received', form_schema_version: 1 });

    // A form without a schema records no version, whatever its mode.
    const bare = await createForm(t, key);
    await setMode(bare, 'enforce');
    const b = await post(bare, { anything: true });
    expect(await detail(b.json.submission_id)).toMatchObject({ status: 'received', form_schema_version: null });
  });

  it('serves the managed schema publicly, CORS-open and cacheable; 404 for other modes', async () => {
    const formId = await createForm(t, key);
    const ui = { email: { label: 'Email', order: 1 } };
    await publish(formId, { json_schema: contact, ui });

    const observe = await t.request('GET', `/s/${formId}/schema`);
    expect(observe.status).toBe(404);
    expect(observe.json.error.hint).toContain('managed');
    expect(observe.headers.get('access-control-allow-origin')).toBe('*');
    expect(observe.headers.get('cache-control')).toBeNull();

    await setMode(formId, 'managed');
    const r = await t.request('GET', `/s/${formId}/schema`, { headers: { origin: 'https://site.example' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ form_id: formId, version: 1, json_schema: contact, ui });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('cache-control')).toBe('public, max-age=60');

    const pre = await t.request('OPTIONS', `/s/${formId}/schema`, {
      headers: { origin: 'https://site.example', 'access-control-request-method': 'GET' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('GET');

    const managedNoSchema = await createForm(t, key);
    await setMode(managedNoSchema, 'managed');
    expect((await t.request('GET', `/s/${managedNoSchema}/schema`)).status).toBe(404);
    expect((await t.request('GET', '/s/fm_01h455vb4pex5vsknk084sn02q/schema')).status).toBe(404);
  });

  it('hides another organization’s form on all three routes and needs manage to publish', async () => {
    const formId = await createForm(t, key);
    await publish(formId, { json_schema: contact });
    for (const [method, path] of [
      ['GET', `/v1/forms/${formId}/schema`],
      ['POST', `/v1/forms/${formId}/schema`],
      ['GET', `/v1/forms/${formId}/schema/versions`],
    ]) {
      const r = await t.api(method, path, otherKey, method === 'POST' ? { json: { json_schema: contact } } : {});
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
    const forbidden = await publish(formId, { json_schema: contact }, readKey);
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error.code).toBe('forbidden');
    expect((await t.api('GET', `/v1/forms/${formId}/schema`, null)).status).toBe(401);
    expect((await t.api('GET', `/v1/forms/${formId}/schema/versions`, key)).json.data).toHaveLength(1);
  });
});
