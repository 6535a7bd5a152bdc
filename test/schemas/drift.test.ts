import { describe, expect, it } from 'vitest';
import { compareToSchema } from '../../server/services/drift-findings.js';
import { createForm } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

describe('compareToSchema', () => {
  const schema = {
    type: 'object',
    required: ['email', 'name'],
    properties: { email: { type: 'string' }, age: { type: 'integer' }, score: { type: 'number' }, name: {} },
    patternProperties: { '^utm_': { type: 'string' } },
  };

  it('finds undeclared fields, absent required fields and values of another type, sorted', () => {
    expect(compareToSchema(schema, { email: 5, age: 'forty', extra: true, utm_source: 'x' })).toEqual([
      { field: 'age', kind: 'type_change', details: { expected: ['integer'], observed: 'string' } },
      { field: 'email', kind: 'type_change', details: { expected: ['string'], observed: 'integer' } },
      { field: 'extra', kind: 'new_field', details: { observed_type: 'boolean' } },
      { field: 'name', kind: 'missing_field', details: { required: true } },
    ]);
  });

  it('accepts whole numbers for number, type arrays, untyped properties and present-but-empty required', () => {
    expect(compareToSchema(schema, { email: 'a@b.c', name: '', age: 3, score: 4 })).toEqual([]);
    expect(compareToSchema({ properties: { x: { type: ['string', 'null'] } } }, { x: null })).toEqual([]);
  });

  it('raises no new_field when the schema declares no properties, and nothing for a non-object schema', () => {
    expect(compareToSchema({ type: 'object' }, { anything: 1 })).toEqual([]);
    expect(compareToSchema(true, { anything: 1 })).toEqual([]);
  });
});

const { t, key, readKey, otherKey } = await tenantApp();
let ip = 0;

const post = (formId: string, json: unknown) => {
  ip += 1;
  return t.request('POST', `/s/${formId}`, { json, headers: { 'x-forwarded-for': `203.0.113.${ip}` } });
};
const publish = async (formId: string, json_schema: unknown) =>
  expect((await t.api('POST', `/v1/forms/${formId}/schema`, key, { json: { json_schema } })).status).toBe(201);
const drift = async (formId: string, q = '') => (await t.api('GET', `/v1/forms/${formId}/drift${q}`, key)).json;
const driftEventsOf = async (formId: string) =>
  (
    (await t.api('GET', '/v1/events?type=drift.detected&limit=200', key)).json.data as {
      subject: { form_id: string };
    }[]
  ).filter((e) => e.subject.form_id === formId);

async function observedForm(mode = 'observe') {
  const formId = await createForm(t, key);
  expect((await t.api('PATCH', `/v1/forms/${formId}`, key, { json: { schema_mode: mode } })).status).toBe(200);
  await publish(formId, {
    type: 'object',
    required: ['email'],
    properties: { email: { type: 'string' }, age: { type: 'integer' } },
  });
  return formId;
}

describe('drift', () => {
  it('observe: one open event per (field, kind) with a count, last submission and one drift.detected', async () => {
    const formId = await observedForm();
    const first = await post(formId, { email: 'a@example.com', surprise: 'x' });
    expect(first.status).toBe(200);
    expect(first.json.status).toBe('received');
    const second = await post(formId, { email: 'b@example.com', surprise: 'y', age: 'old' });

    const list = await drift(formId);
    expect(list.data).toHaveLength(2);
    const byKind = Object.fromEntries(list.data.map((d: { kind: string }) => [d.kind, d]));
    expect(byKind.new_field).toMatchObject({
      form_id: formId,
      field: 'surprise',
      status: 'open',
      count: 2,
      schema_version: 1,
      first_submission_id: first.json.submission_id,
      last_submission_id: second.json.submission_id,
      closed_at: null,
    });
    expect(byKind.type_change).toMatchObject({
      field: 'age',
      count: 1,
      details: { expected: ['integer'], observed: 'string' },
    });

    const events = await driftEventsOf(formId);
    expect(events).toHaveLength(2);
    const detail = (await t.api('GET', `/v1/submissions/${second.json.submission_id}`, key)).json;
    expect(detail.drift.map((d: { field: string }) => d.field).sort()).toEqual(['age', 'surprise']);
  });

  it('concurrent submissions with the same new field share one open event', async () => {
    const formId = await observedForm();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(formId, { email: `c${i}@example.com`, same: i })),
    );
    for (const a of answers) expect(a.status).toBe(200);
    const list = await drift(formId);
    expect(list.data).toHaveLength(1);
    expect(list.data[0].count).toBe(8);
    expect(await driftEventsOf(formId)).toHaveLength(1);
  });

  it('enforce: a violation is quarantined and raises missing_field drift; spam raises none', async () => {
    const formId = await observedForm('enforce');
    const r = await post(formId, { name: 'no email' });
    expect(r.json.status).toBe('quarantined');
    const spam = await post(formId, { _gotcha: 'bot', other: 1 });
    expect(spam.json.status).toBe('spam');
    const kinds = (await drift(formId)).data.map((d: { kind: string; field: string }) => `${d.kind}:${d.field}`).sort();
    expect(kinds).toEqual(['missing_field:email', 'new_field:name']);
  });

  it('publishing a new version closes open drift; status=closed and all list it', async () => {
    const formId = await observedForm();
    await post(formId, { email: 'a@example.com', later: 1 });
    expect((await drift(formId)).data).toHaveLength(1);
    await publish(formId, { type: 'object', properties: { email: { type: 'string' }, later: { type: 'integer' } } });
    expect((await drift(formId)).data).toEqual([]);
    const closed = (await drift(formId, '?status=closed')).data;
    expect(closed).toHaveLength(1);
    expect(closed[0].closed_at).toMatch(/Z$/);
    expect((await drift(formId, '?status=all')).data).toHaveLength(1);
    await post(formId, { email: 'b@example.com', later: 2 });
    expect((await drift(formId)).data).toEqual([]);
  });

  it('dismiss: the event leaves the open list and the same drift stays silent until the next version', async () => {
    const formId = await observedForm();
    await post(formId, { email: 'a@example.com', noise: 1 });
    const [open] = (await drift(formId)).data;
    const forbidden = await t.api('POST', `/v1/forms/${formId}/drift/${open.id}/dismiss`, readKey);
    expect(forbidden.status).toBe(403);
    const foreign = await t.api('POST', `/v1/forms/${formId}/drift/${open.id}/dismiss`, otherKey);
    expect(foreign.status).toBe(404);
    const dismissed = await t.api('POST', `/v1/forms/${formId}/drift/${open.id}/dismiss`, key);
    expect(dismissed.status).toBe(200);
    expect(dismissed.json).toMatchObject({ id: open.id, status: 'dismissed' });
    const again = await t.api('POST', `/v1/forms/${formId}/drift/${open.id}/dismiss`, key);
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('conflict');
    expect(again.json.error.hint).toBeTruthy();

    await post(formId, { email: 'b@example.com', noise: 2 });
    expect((await drift(formId)).data).toEqual([]);
    expect((await drift(formId, '?status=dismissed')).data[0].count).toBe(2);
    expect(await driftEventsOf(formId)).toHaveLength(1);

    await publish(formId, { type: 'object', properties: { email: { type: 'string' } } });
    await post(formId, { email: 'c@example.com', noise: 3 });
    const reopened = (await drift(formId)).data;
    expect(reopened).toHaveLength(1);
    expect(reopened[0]).toMatchObject({ field: 'noise', schema_version: 2, count: 1 });
    expect(await driftEventsOf(formId)).toHaveLength(2);
  });

  it('another organization’s form is a 404, an unknown drift id too', async () => {
    const formId = await observedForm();
    expect((await t.api('GET', `/v1/forms/${formId}/drift`, otherKey)).status).toBe(404);
    const missing = await t.api('POST', `/v1/forms/${formId}/drift/dr_01h0000000000000000000000a/dismiss`, key);
    expect(missing.status).toBe(404);
    expect(missing.json.error.hint).toBeTruthy();
  });

  it('a form without a schema raises no drift', async () => {
    const formId = await createForm(t, key);
    await post(formId, { anything: 1 });
    expect((await drift(formId)).data).toEqual([]);
  });
});
