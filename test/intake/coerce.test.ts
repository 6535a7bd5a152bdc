import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { createForm, orgIdOf } from '../helpers/seed.js';

let t: TestEnv;
let key: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

const TYPED = {
  type: 'object',
  required: ['name', 'age', 'agree', 'when'],
  properties: {
    name: { type: 'string' },
    age: { type: 'integer' },
    qty: { type: 'number' },
    agree: { type: 'boolean' },
    when: { type: 'string', format: 'date-time' },
    score: { type: 'number' },
    sizes: { type: 'array', items: { type: 'integer' } },
  },
};
const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };

beforeAll(async () => {
  t = await startTestApp({ RETRY_BASE_MS: '20' });
  await t.startWorker();
  receiver = await startReceiver();
  key = (await t.onboard()).key;
  const org = await orgIdOf(t, key);
  const tz = await t.api('PATCH', `/v1/organizations/${org}`, key, { json: { timezone: 'Europe/Berlin' } });
  expect(tz.status).toBe(200);
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function typedForm(mode: string, jsonSchema: unknown = TYPED) {
  const id = await createForm(t, key);
  expect((await t.api('PATCH', `/v1/forms/${id}`, key, { json: { schema_mode: mode } })).status).toBe(200);
  if (jsonSchema) {
    const p = await t.api('POST', `/v1/forms/${id}/schema`, key, { json: { json_schema: jsonSchema } });
    expect(p.status).toBe(201);
  }
  return id;
}

const stored = async (id: string) => (await t.api('GET', `/v1/submissions/${id}`, key)).json;
const postForm = (formId: string, body: string) => t.request('POST', `/s/${formId}`, { body, headers: FORM });

describe('form-encoded posts are typed by the current schema', () => {
  it('urlencoded to a managed form: received with integer, number, boolean, RFC 3339 in the org zone, blank optional dropped', async () => {
    const formId = await typedForm('managed');
    const r = await postForm(formId, 'name=Ada&age=25&qty=2.5&agree=on&when=2026-11-25T10%3A30&score=&sizes=3');
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('received');
    const s = await stored(r.json.submission_id);
    expect(s.data).toEqual({
      name: 'Ada',
      age: 25,
      qty: 2.5,
      agree: true,
      when: '2026-11-25T10:30:00+01:00',
      sizes: [3],
    });
  });

  it('multipart to an enforce form is typed the same way, repeated values item by item', async () => {
    const formId = await typedForm('enforce');
    const fd = new FormData();
    for (const [k, v] of [
      ['name', 'Bo'],
      ['age', '41'],
      ['agree', 'true'],
      ['when', '2026-07-01T08:00'],
      ['sizes', '1'],
      ['sizes', '2'],
    ])
      fd.append(k, v);
    const r = await t.request('POST', `/s/${formId}`, { body: fd, headers: { accept: 'application/json' } });
    expect(r.json.status).toBe('received');
    expect((await stored(r.json.submission_id)).data).toEqual({
      name: 'Bo',
      age: 41,
      agree: true,
      when: '2026-07-01T08:00:00+02:00',
      sizes: [1, 2],
    });
  });

  it('JSON bodies are never coerced', async () => {
    const formId = await typedForm('enforce');
    const r = await t.request('POST', `/s/${formId}`, {
      json: { name: 'Ada', age: '25', agree: 'on', when: '2026-11-25T10:30' },
    });
    expect(r.json.status).toBe('quarantined');
    const s = await stored(r.json.submission_id);
    expect(s.quarantine_reason).toBe('schema_violation');
    expect(s.data).toEqual({ name: 'Ada', age: '25', agree: 'on', when: '2026-11-25T10:30' });
  });

  it('a value that does not convert is kept as sent and quarantined with the issue', async () => {
    const formId = await typedForm('managed');
    const r = await postForm(formId, 'name=Ada&age=twenty&agree=on&when=2026-11-25T10%3A30');
    expect(r.json.status).toBe('quarantined');
    const s = await stored(r.json.submission_id);
    expect(s.data.age).toBe('twenty');
    expect(s.data.agree).toBe(true);
    expect(s.issues).toEqual([{ path: 'age', message: 'must be integer' }]);
  });

  it('observe mode types too (no type drift from the encoding); no schema leaves strings', async () => {
    const observed = await typedForm('observe');
    const r = await postForm(observed, 'name=Ada&age=25&agree=on&when=2026-11-25T10%3A30');
    const s = await stored(r.json.submission_id);
    expect(s.data).toMatchObject({ age: 25, agree: true });
    expect(s.drift ?? []).toEqual([]);
    const bare = await typedForm('observe', null);
    const b = await postForm(bare, 'age=25&agree=on');
    expect((await stored(b.json.submission_id)).data).toEqual({ age: '25', agree: 'on' });
  });

  it('follows the current schema version: a new publish changes the types at once', async () => {
    const formId = await typedForm('managed', { type: 'object', properties: { n: { type: 'string' } } });
    const first = await postForm(formId, 'n=7');
    expect((await stored(first.json.submission_id)).data).toEqual({ n: '7' });
    const p = await t.api('POST', `/v1/forms/${formId}/schema`, key, {
      json: { json_schema: { type: 'object', properties: { n: { type: 'integer' } } } },
    });
    expect(p.status).toBe(201);
    const second = await postForm(formId, 'n=7');
    expect(second.json.status).toBe('received');
    expect((await stored(second.json.submission_id)).data).toEqual({ n: 7 });
  });

  it('the webhook receives the typed values', async () => {
    const formId = await typedForm('enforce', {
      type: 'object',
      required: ['age', 'agree'],
      properties: { age: { type: 'integer' }, agree: { type: 'boolean' }, name: { type: 'string' } },
    });
    const d = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'hook', config: { url: receiver.url } },
    });
    expect(d.status).toBe(201);
    expect(
      (await t.api('POST', '/v1/routes', key, { json: { form_id: formId, destination_id: d.json.id } })).status,
    ).toBe(201);
    const r = await postForm(formId, 'name=Ada&age=31&agree=on');
    expect(r.json.status).toBe('received');
    await receiver.waitFor((all) => all.some((q) => q.json?.submission?.id === r.json.submission_id));
    const got = receiver.requests.find((q) => q.json?.submission?.id === r.json.submission_id);
    expect(got?.json.data).toEqual({ name: 'Ada', age: 31, agree: true });
  });
});
