import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries } from '../../server/db/schema.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { tenants } from '../helpers/tenant.js';

let t: TestEnv;
let key: string;
let otherKey: string;
let readKey: string;
let formId: string;
let destId: string;
let otherFormId: string;
let otherDestId: string;

const hook = { type: 'webhook', name: 'Hook', config: { url: 'https://hooks.example.com/in' } };

beforeAll(async () => {
  t = await startTestApp();
  ({ key, readKey, otherKey } = await tenants(t));
  formId = (await t.api('POST', '/v1/forms', key, { json: { name: 'Contact' } })).json.id;
  destId = (await t.api('POST', '/v1/destinations', key, { json: hook })).json.id;
  otherFormId = (await t.api('POST', '/v1/forms', otherKey, { json: { name: 'Theirs' } })).json.id;
  otherDestId = (await t.api('POST', '/v1/destinations', otherKey, { json: hook })).json.id;
});
afterAll(() => t.close());

const create = (json: Record<string, unknown>, k = key) => t.api('POST', '/v1/routes', k, { json });

function expect422(r: { status: number; json: any }, path?: string) {
  expect(r.status).toBe(422);
  expect(r.json.error.code).toBe('validation_failed');
  expect(r.json.error.details.issues.length).toBeGreaterThan(0);
  if (path) expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
}

describe('routes', () => {
  it('creates a route with the defaults, reads, lists, updates and deletes it', async () => {
    const created = await create({ form_id: formId, destination_id: destId });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^rt_/),
      form_id: formId,
      stream_id: null,
      destination_id: destId,
      enabled: true,
      mode: { type: 'instant' },
      window: { from: null, until: null },
      quality: { exclude_spam: true, exclude_quarantined: true },
      filter: null,
      match: null,
      transform: null,
      counts: { deliveries: 0, sent: 0 },
      created_at: expect.stringMatching(/Z$/),
    });
    const id = created.json.id;
    expect((await t.api('GET', `/v1/routes/${id}`, key)).json).toEqual(created.json);
    const list = await t.api('GET', '/v1/routes', key);
    expect(list.json.data.map((r: { id: string }) => r.id)).toContain(id);
    const patched = await t.api('PATCH', `/v1/routes/${id}`, key, { json: { enabled: false } });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ id, enabled: false, form_id: formId });
    expect((await t.api('DELETE', `/v1/routes/${id}`, key)).status).toBe(204);
    expect((await t.api('GET', `/v1/routes/${id}`, key)).status).toBe(404);
    expect((await t.api('DELETE', `/v1/routes/${id}`, key)).status).toBe(404);
  });

  it('takes mode, window, quality and enabled, filling in defaults for partial objects', async () => {
    const r = await create({
      form_id: formId,
      destination_id: destId,
      mode: { type: 'digest', cron: '0 9 * * 1-5', timezone: 'europe/berlin' },
      window: { from: '2026-01-01T10:00:00+02:00' },
      quality: { exclude_spam: false },
      enabled: false,
      filter: null,
      transform: null,
    });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      enabled: false,
      mode: { type: 'digest', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
      window: { from: '2026-01-01T08:00:00.000Z', until: null },
      quality: { exclude_spam: false, exclude_quarantined: true },
      filter: null,
      transform: null,
    });
  });

  it('answers 422 for bad modes and windows', async () => {
    const base = { form_id: formId, destination_id: destId };
    expect422(await create({ ...base, mode: { type: 'digest', cron: 'every day', timezone: 'UTC' } }), 'mode.cron');
    expect422(await create({ ...base, mode: { type: 'digest', cron: '61 * * * *', timezone: 'UTC' } }), 'mode.cron');
    expect422(await create({ ...base, mode: { type: 'digest', cron: '0 0 30 2 *', timezone: 'UTC' } }), 'mode.cron');
    expect422(
      await create({ ...base, mode: { type: 'digest', cron: '0 9 * * *', timezone: 'Mars/Olympus' } }),
      'mode.timezone',
    );
    expect422(await create({ ...base, mode: { type: 'digest', timezone: 'UTC' } }), 'mode.cron');
    expect422(await create({ ...base, mode: { type: 'hourly' } }), 'mode.type');
    expect422(await create({ ...base, mode: { type: 'instant', cron: '* * * * *' } }));
    expect422(
      await create({ ...base, window: { from: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' } }),
      'window.until',
    );
    expect422(
      await create({ ...base, window: { from: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' } }),
      'window.until',
    );
    expect422(await create({ ...base, window: { from: 'yesterday' } }), 'window.from');
    expect422(await create({ ...base, window: { from: null, until: null, at: null } }));
    expect422(await create({ ...base, quality: { exclude_spam: 'yes' } }), 'quality.exclude_spam');
    expect422(await create({ ...base, enabled: 'true' }), 'enabled');
    expect422(await create({ ...base, color: 'red' }));
  });

  it('needs exactly one source: form_id or stream_id', async () => {
    expect422(await create({ destination_id: destId }), 'form_id');
    expect422(await create({ form_id: formId, stream_id: 'st_x', destination_id: destId }), 'form_id');
    expect422(await create({ form_id: formId }), 'destination_id');
    const stream = await create({ stream_id: 'st_01hzzzzzzzzzzzzzzzzzzzzzzz', destination_id: destId });
    expect(stream.status).toBe(404);
    expect(stream.json.error.code).toBe('not_found');
    expect(stream.json.error.message).toMatch(/stream/);
  });

  it('answers 404 for unknown or foreign forms and destinations', async () => {
    for (const body of [
      { form_id: 'fm_unknown', destination_id: destId },
      { form_id: otherFormId, destination_id: destId },
      { form_id: formId, destination_id: 'ds_unknown' },
      { form_id: formId, destination_id: otherDestId },
    ]) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
    // org B cannot route org A's form to its own destination
    expect((await create({ form_id: formId, destination_id: otherDestId }, otherKey)).status).toBe(404);
  });

  it('refuses filter and transform expressions with 422 expressions_not_enabled', async () => {
    const base = { form_id: formId, destination_id: destId };
    for (const extra of [{ filter: 'data.email != null' }, { transform: 'data' }, { filter: '' }]) {
      const r = await create({ ...base, ...extra });
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('expressions_not_enabled');
      expect(r.json.error.hint).toBeTruthy();
    }
    const rt = await create(base);
    const p = await t.api('PATCH', `/v1/routes/${rt.json.id}`, key, { json: { transform: 'x' } });
    expect(p.status).toBe(422);
    expect(p.json.error.code).toBe('expressions_not_enabled');
  });

  it('PATCH changes destination, mode, window and quality (merged), never the source', async () => {
    const second = (await t.api('POST', '/v1/destinations', key, { json: { ...hook, name: 'Second' } })).json.id;
    const rt = await create({
      form_id: formId,
      destination_id: destId,
      window: { from: '2026-01-01T00:00:00Z', until: '2027-01-01T00:00:00Z' },
    });
    const id = rt.json.id;
    const p = await t.api('PATCH', `/v1/routes/${id}`, key, {
      json: {
        destination_id: second,
        mode: { type: 'digest', cron: '@daily', timezone: 'UTC' },
        window: { until: null },
        quality: { exclude_quarantined: false },
      },
    });
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({
      destination_id: second,
      mode: { type: 'digest', cron: '@daily', timezone: 'UTC' },
      window: { from: '2026-01-01T00:00:00.000Z', until: null },
      quality: { exclude_spam: true, exclude_quarantined: false },
    });
    const back = await t.api('PATCH', `/v1/routes/${id}`, key, { json: { mode: { type: 'instant' } } });
    expect(back.json.mode).toEqual({ type: 'instant' });
    expect422(
      await t.api('PATCH', `/v1/routes/${id}`, key, { json: { window: { until: '2025-01-01T00:00:00Z' } } }),
      'window.until',
    );
    expect422(
      await t.api('PATCH', `/v1/routes/${id}`, key, { json: { mode: { type: 'digest', cron: 'x', timezone: 'UTC' } } }),
      'mode.cron',
    );
    expect422(await t.api('PATCH', `/v1/routes/${id}`, key, { json: { form_id: formId } }));
    expect422(await t.api('PATCH', `/v1/routes/${id}`, key, { json: { stream_id: 'st_x' } }));
    const foreign = await t.api('PATCH', `/v1/routes/${id}`, key, { json: { destination_id: otherDestId } });
    expect(foreign.status).toBe(404);
    expect((await t.api('PATCH', `/v1/routes/${id}`, key, { json: { destination_id: 'ds_gone' } })).status).toBe(404);
    const unchanged = await t.api('PATCH', `/v1/routes/${id}`, key, { json: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.json).toEqual(back.json);
  });

  it('counts deliveries and sent deliveries per route', async () => {
    const a = (await create({ form_id: formId, destination_id: destId })).json.id;
    const b = (await create({ form_id: formId, destination_id: destId })).json.id;
    const orgId = (await t.api('GET', '/v1/me', key)).json.organization.id;
    const row = (routeId: string, status: string) => ({
      id: newId('delivery'),
      orgId,
      routeId,
      destinationId: destId,
      formId,
      status,
      maxAttempts: 10,
      payload: {},
    });
    await t.deps.database.db
      .insert(deliveries)
      .values([row(a, 'sent'), row(a, 'sent'), row(a, 'pending'), row(a, 'dead'), row(b, 'skipped')]);
    expect((await t.api('GET', `/v1/routes/${a}`, key)).json.counts).toEqual({ deliveries: 4, sent: 2 });
    const list = await t.api('GET', `/v1/routes?form_id=${formId}&limit=200`, key);
    const byId = new Map(list.json.data.map((r: { id: string; counts: unknown }) => [r.id, r.counts]));
    expect(byId.get(a)).toEqual({ deliveries: 4, sent: 2 });
    expect(byId.get(b)).toEqual({ deliveries: 1, sent: 0 });
  });

  it('filters lists by form, destination and stream, newest first with cursors', async () => {
    const f2 = (await t.api('POST', '/v1/forms', key, { json: { name: 'Filter form' } })).json.id;
    const d2 = (await t.api('POST', '/v1/destinations', key, { json: { ...hook, name: 'Filter dest' } })).json.id;
    const ids = [
      (await create({ form_id: f2, destination_id: destId })).json.id,
      (await create({ form_id: f2, destination_id: d2 })).json.id,
      (await create({ form_id: formId, destination_id: d2 })).json.id,
    ];
    const ofForm = await t.api('GET', `/v1/routes?form_id=${f2}`, key);
    expect(ofForm.json.data.map((r: { id: string }) => r.id)).toEqual([ids[1], ids[0]].sort().reverse());
    const ofDest = await t.api('GET', `/v1/routes?destination_id=${d2}`, key);
    expect(ofDest.json.data.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]].sort().reverse());
    const both = await t.api('GET', `/v1/routes?form_id=${f2}&destination_id=${d2}`, key);
    expect(both.json.data.map((r: { id: string }) => r.id)).toEqual([ids[1]]);
    expect((await t.api('GET', '/v1/routes?stream_id=st_none', key)).json).toEqual({ data: [], next_cursor: null });
    const page = await t.api('GET', `/v1/routes?form_id=${f2}&limit=1`, key);
    expect(page.json.data).toHaveLength(1);
    const rest = await t.api('GET', `/v1/routes?form_id=${f2}&limit=1&cursor=${page.json.next_cursor}`, key);
    expect(rest.json.data).toHaveLength(1);
    expect(rest.json.data[0].id).not.toBe(page.json.data[0].id);
    expect(rest.json.next_cursor).toBeNull();
    expect((await t.api('GET', '/v1/routes?cursor=ds_x', key)).status).toBe(422);
  });

  it('keeps tenants apart and enforces scopes', async () => {
    const rt = await create({ form_id: formId, destination_id: destId });
    const id = rt.json.id;
    expect((await t.api('GET', `/v1/routes/${id}`, otherKey)).status).toBe(404);
    expect((await t.api('PATCH', `/v1/routes/${id}`, otherKey, { json: { enabled: false } })).status).toBe(404);
    expect((await t.api('DELETE', `/v1/routes/${id}`, otherKey)).status).toBe(404);
    expect((await t.api('GET', '/v1/routes?limit=200', otherKey)).text).not.toContain(id);
    expect((await t.api('GET', `/v1/routes?form_id=${formId}`, otherKey)).json.data).toEqual([]);
    expect((await t.api('GET', '/v1/routes', null)).status).toBe(401);
    expect((await create({ form_id: formId, destination_id: destId }, '')).status).toBe(401);
    const ro = await create({ form_id: formId, destination_id: destId }, readKey);
    expect(ro.status).toBe(403);
    expect(ro.json.error.code).toBe('forbidden');
    expect((await t.api('PATCH', `/v1/routes/${id}`, readKey, { json: { enabled: false } })).status).toBe(403);
    expect((await t.api('DELETE', `/v1/routes/${id}`, readKey)).status).toBe(403);
    expect((await t.api('GET', `/v1/routes/${id}`, readKey)).status).toBe(200);
    expect((await t.api('GET', '/v1/routes', readKey)).status).toBe(200);
  });
});
