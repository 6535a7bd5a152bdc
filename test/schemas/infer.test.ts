import { describe, expect, it } from 'vitest';
import { DRAFT_2020_12, humanize, inferSchema } from '../../server/schemas/infer.js';
import { compileOrThrow } from '../../server/schemas/validate.js';
import { createForm } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

type Sample = Record<string, unknown>;
type Field = { name: string; types: string[]; presence: number; format?: string; enum?: string[] };

describe('humanize', () => {
  it('turns snake, camel, kebab and dotted names into a sentence-case label', () => {
    expect(humanize('full_name')).toBe('Full name');
    expect(humanize('fullName')).toBe('Full name');
    expect(humanize('full-name')).toBe('Full name');
    expect(humanize('utm.source')).toBe('Utm source');
    expect(humanize('  company   size ')).toBe('Company size');
    expect(humanize('EMAIL')).toBe('Email');
    expect(humanize('address2Line')).toBe('Address2 line');
  });

  it('keeps a name made only of separators (and the empty name) as it is', () => {
    expect(humanize('___')).toBe('___');
    expect(humanize('')).toBe('');
  });
});

describe('inferSchema', () => {
  const samples: Sample[] = [
    { email: 'a@example.com', n: 1, ok: true, note: 'x' },
    { email: 'b@example.com', n: 2, ok: false },
    { email: 'c@example.com', n: 3, ok: true, extra: null },
  ];

  it('is deterministic and does not touch its input', () => {
    const copy = structuredClone(samples);
    const a = inferSchema(samples);
    const b = inferSchema(copy);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(copy).toEqual(samples);
    expect(a.json_schema).toMatchObject({ $schema: DRAFT_2020_12, type: 'object' });
  });

  it('types fields, requires the ones always present and orders ui hints most present first, then by name', () => {
    const r = inferSchema(samples);
    expect(r.json_schema.properties).toEqual({
      email: { type: 'string', format: 'email' },
      n: { type: 'integer' },
      ok: { type: 'boolean' },
      note: { type: 'string' },
      extra: { type: 'null' },
    });
    expect(r.json_schema.required).toEqual(['email', 'n', 'ok']);
    expect(r.ui).toEqual({
      email: { label: 'Email', order: 1, widget: 'email' },
      n: { label: 'N', order: 2, widget: 'number' },
      ok: { label: 'Ok', order: 3, widget: 'checkbox' },
      note: { label: 'Note', order: 4 },
      extra: { label: 'Extra', order: 5 },
    });
    expect(r.fields.map((f) => [f.name, f.presence])).toEqual([
      ['email', 1],
      ['n', 1],
      ['ok', 1],
      ['note', 0.3333],
      ['extra', 0],
    ]);
  });

  it('folds integer into number once a fraction is seen; mixed types become a type array', () => {
    const r = inferSchema([
      { x: 1, y: 'a' },
      { x: 1.5, y: 2 },
      { x: 3, y: null },
    ]);
    expect(r.json_schema.properties).toEqual({
      x: { type: 'number' },
      y: { type: ['string', 'integer', 'null'] },
    });
    expect(r.fields[0].types).toEqual(['number']);
    expect(r.ui.x.widget).toBe('number');
    expect(r.ui.y).not.toHaveProperty('widget');
  });

  it('tells date from date-time, and gives no format to a mix of both or to an impossible date', () => {
    const props = (values: string[]) =>
      (inferSchema(values.map((v) => ({ v }))).json_schema.properties as Record<string, unknown>).v;
    expect(props(['2024-02-29', '2025-12-31'])).toEqual({ type: 'string', format: 'date' });
    expect(props(['2024-02-29T10:00:00Z', '2025-12-31T23:59:59.123+02:00'])).toEqual({
      type: 'string',
      format: 'date-time',
    });
    expect(props(['2024-02-29', '2024-02-29T10:00:00Z'])).toEqual({ type: 'string' });
    expect(props(['2023-02-29'])).toEqual({ type: 'string' });
    expect(props(['2024-01-31T24:00:00Z'])).toEqual({ type: 'string' });
    // No zone: ajv's date-time needs one, so the draft must not claim the format.
    expect(props(['2024-01-31T10:00:00'])).toEqual({ type: 'string' });
    expect(inferSchema([{ v: '2024-01-31' }]).ui.v.widget).toBe('date');
  });

  it('gives uri only when every value is an http(s) URL', () => {
    const props = (values: string[]) =>
      (inferSchema(values.map((v) => ({ v }))).json_schema.properties as Record<string, unknown>).v;
    expect(props(['https://a.example/x?y=1', 'http://b.example'])).toEqual({ type: 'string', format: 'uri' });
    expect(props(['https://a.example', 'ftp://files.example/x'])).toEqual({ type: 'string' });
    expect(props(['https://a.example', 'see https://b.example'])).toEqual({ type: 'string' });
    expect(props(['mailto:a@example.com'])).toEqual({ type: 'string' });
  });

  it('an optional email field posted blank gets anyOf [{format}, {const: ""}] and still accepts ""', () => {
    const blanky: Sample[] = [
      { email: 'a@example.com' },
      { email: '' },
      { email: 'b@example.com' },
      { email: '' },
      { email: null },
    ];
    const r = inferSchema(blanky);
    expect((r.json_schema.properties as Record<string, unknown>).email).toEqual({
      type: ['string', 'null'],
      anyOf: [{ format: 'email' }, { const: '' }],
    });
    expect(r.json_schema.required).toEqual([]);
    expect(r.fields).toEqual([{ name: 'email', types: ['string', 'null'], presence: 0.4, format: 'email' }]);
    const validate = compileOrThrow(r.json_schema);
    for (const s of blanky) expect(validate(s), JSON.stringify(s)).toBe(true);
    expect(validate({})).toBe(true);
    expect(validate({ email: 'not an email' })).toBe(false);
  });

  it('a field present in >= 95 % of samples is required; null and "" do not count as present', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => ({
      often: i === 0 ? '' : `v${i}`,
      less: i < 2 ? null : `w${i}`,
      rare: i === 5 ? 'x' : undefined,
    }));
    const r = inferSchema(twenty);
    expect(r.json_schema.required).toEqual(['often']);
    expect(r.fields.map((f) => [f.name, f.presence])).toEqual([
      ['often', 0.95],
      ['less', 0.9],
      ['rare', 0.05],
    ]);
  });

  it('a small repeated closed set is an enum; too few samples, one value or mostly distinct values are not', () => {
    const of = (values: unknown[]) => inferSchema(values.map((v) => ({ v })));
    const yes = of(['red', 'blue', 'red', 'green', 'blue', 'red']);
    expect((yes.json_schema.properties as Record<string, unknown>).v).toEqual({
      type: 'string',
      enum: ['red', 'blue', 'green'],
    });
    expect(yes.fields[0].enum).toEqual(['red', 'blue', 'green']);
    expect(yes.ui.v.widget).toBe('select');

    expect(of(['red', 'blue', 'red', 'blue']).fields[0]).not.toHaveProperty('enum'); // 4 < 5 samples
    expect(of(['same', 'same', 'same', 'same', 'same', 'same']).fields[0]).not.toHaveProperty('enum');
    expect(of(['a', 'b', 'c', 'a', 'b', 'd']).fields[0]).not.toHaveProperty('enum'); // 4 values in 6
    expect(of([1, 2, 1, 2, 1, 2]).fields[0]).not.toHaveProperty('enum'); // numbers are never an enum
    // Repeated emails are not a closed set: the format wins.
    const emails = of(['a@example.com', 'b@example.com', 'a@example.com', 'b@example.com', 'a@example.com']);
    expect(emails.fields[0]).toEqual({ name: 'v', types: ['string'], presence: 1, format: 'email' });
  });

  it('a blank or null answer of an optional enum stays valid', () => {
    const values = ['s', 'm', 's', '', 'm', 's', null];
    const r = inferSchema(values.map((v) => ({ size: v })));
    expect((r.json_schema.properties as Record<string, unknown>).size).toEqual({
      type: ['string', 'null'],
      enum: ['s', 'm', '', null],
    });
    expect(r.fields[0].enum).toEqual(['s', 'm']);
    const validate = compileOrThrow(r.json_schema);
    for (const v of values) expect(validate({ size: v })).toBe(true);
    expect(validate({ size: 'xl' })).toBe(false);
  });

  it('long or multi-line text is a textarea; arrays get an item type; attachment ids get no format or enum', () => {
    const r = inferSchema([
      { bio: 'x'.repeat(120), tags: ['a', 'b'], cv: 'fl_01h00000000000000000000001' },
      { bio: 'short\nlines', tags: ['c'], cv: 'fl_01h00000000000000000000001' },
      { bio: 'y'.repeat(100), tags: [], cv: 'fl_01h00000000000000000000001' },
      { bio: 'z'.repeat(100), tags: ['a'], cv: 'fl_01h00000000000000000000001' },
      { bio: 'w'.repeat(100), tags: ['b'], cv: 'fl_01h00000000000000000000001' },
    ]);
    expect(r.json_schema.properties).toEqual({
      bio: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
      cv: { type: 'string' },
    });
    expect(r.ui.bio.widget).toBe('textarea');
    expect(r.ui.cv).not.toHaveProperty('widget');
    expect(r.fields.find((f) => f.name === 'cv')).toEqual({ name: 'cv', types: ['string'], presence: 1 });
  });

  it('the draft accepts every sample of a mixed set (fractions, blanks, nulls, enums, date-times)', () => {
    const mixed: Sample[] = Array.from({ length: 12 }, (_, i) => ({
      email: `p${i}@example.com`,
      age: i % 4 === 0 ? 30.5 : 20 + i,
      plan: ['free', 'pro'][i % 2],
      when: `2024-0${(i % 9) + 1}-1${i % 10}T08:00:00Z`,
      site: i % 3 ? `https://s${i}.example` : '',
      note: i % 5 ? null : 'hello',
      agree: i % 2 === 0,
    }));
    const r = inferSchema(mixed);
    const validate = compileOrThrow(r.json_schema);
    for (const s of mixed) expect(validate(s), JSON.stringify(validate.errors)).toBe(true);
  });

  it('no samples give an empty object schema', () => {
    expect(inferSchema([])).toEqual({
      json_schema: { $schema: DRAFT_2020_12, type: 'object', properties: {}, required: [] },
      ui: {},
      fields: [],
    });
  });
});

const { t, key, readKey, otherKey } = await tenantApp();
let ip = 0;

const post = (formId: string, json: unknown) => {
  ip += 1;
  return t.request('POST', `/s/${formId}`, { json, headers: { 'x-forwarded-for': `198.51.100.${(ip % 250) + 1}` } });
};
const submitAll = async (formId: string, samples: Sample[]) => {
  const out: string[] = [];
  for (const s of samples) {
    const r = await post(formId, s);
    expect(r.status).toBe(200);
    out.push(r.json.status);
  }
  return out;
};
const infer = (formId: string, json?: unknown, k = key) =>
  t.api('POST', `/v1/forms/${formId}/schema/infer`, k, json === undefined ? {} : { json });
const fieldOf = (fields: Field[], name: string) => fields.find((f) => f.name === name);

/** Twenty realistic answers: every field kind the draft distinguishes. */
const people: Sample[] = Array.from({ length: 20 }, (_, i) => ({
  email: `person${i}@example.com`,
  age: 20 + i,
  score: i === 3 ? 1.5 : 1,
  subscribed: i % 3 === 0,
  plan: ['free', 'pro', 'team'][i % 3],
  site: `https://site${i}.example.com/about`,
  homepage: i === 7 ? 'my blog' : `http://home${i}.example.org/`,
  ...(i === 4 ? {} : { company: `Company ${i}` }),
  ...(i < 18 ? { phone: `+1 555 01${String(i).padStart(2, '0')}` } : {}),
  ...(i < 2 ? { nickname: `Nick ${i}` } : {}),
}));

describe('POST /v1/forms/{id}/schema/infer', () => {
  it('infers a draft from received submissions: types, formats, enum, required, ui hints', async () => {
    const formId = await createForm(t, key);
    expect(await submitAll(formId, people)).toEqual(people.map(() => 'received'));

    const r = await infer(formId);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['draft', 'fields', 'sample_size']);
    expect(r.json.sample_size).toBe(20);
    const { draft } = r.json;
    expect(Object.keys(draft).sort()).toEqual(['changelog', 'inferred', 'json_schema', 'ui']);
    expect(draft.inferred).toBe(true);
    expect(draft.changelog).toBe('Inferred from 20 submissions');
    expect(draft.json_schema).toMatchObject({ $schema: DRAFT_2020_12, type: 'object' });

    const props = draft.json_schema.properties;
    expect(props.email).toEqual({ type: 'string', format: 'email' });
    expect(props.age).toEqual({ type: 'integer' });
    expect(props.score).toEqual({ type: 'number' });
    expect(props.subscribed).toEqual({ type: 'boolean' });
    expect(props.plan.type).toBe('string');
    expect([...props.plan.enum].sort()).toEqual(['free', 'pro', 'team']);
    expect(props.site).toEqual({ type: 'string', format: 'uri' });
    expect(props.homepage).toEqual({ type: 'string' }); // one "my blog" among URLs: no format
    expect(props.company).toEqual({ type: 'string' });
    expect(props.phone).toEqual({ type: 'string' });
    expect(props.nickname).toEqual({ type: 'string' });
    expect(Object.keys(props).sort()).toEqual(
      ['age', 'company', 'email', 'homepage', 'nickname', 'phone', 'plan', 'score', 'site', 'subscribed'].sort(),
    );
    // company is in 19 of 20 (95 %): required; phone in 18 of 20 and nickname in 2: optional.
    expect([...draft.json_schema.required].sort()).toEqual([
      'age',
      'company',
      'email',
      'homepage',
      'plan',
      'score',
      'site',
      'subscribed',
    ]);

    const fields = r.json.fields as Field[];
    expect(fields).toHaveLength(10);
    expect(fieldOf(fields, 'email')).toEqual({ name: 'email', types: ['string'], presence: 1, format: 'email' });
    expect(fieldOf(fields, 'age')).toEqual({ name: 'age', types: ['integer'], presence: 1 });
    expect(fieldOf(fields, 'score')).toEqual({ name: 'score', types: ['number'], presence: 1 });
    expect(fieldOf(fields, 'subscribed')).toEqual({ name: 'subscribed', types: ['boolean'], presence: 1 });
    expect(fieldOf(fields, 'site')?.format).toBe('uri');
    expect(fieldOf(fields, 'homepage')).not.toHaveProperty('format');
    expect([...(fieldOf(fields, 'plan')?.enum ?? [])].sort()).toEqual(['free', 'pro', 'team']);
    expect(fieldOf(fields, 'company')?.presence).toBe(0.95);
    expect(fieldOf(fields, 'phone')?.presence).toBe(0.9);
    expect(fieldOf(fields, 'nickname')?.presence).toBe(0.1);

    expect(draft.ui.email).toEqual({ label: 'Email', order: expect.any(Number), widget: 'email' });
    expect(draft.ui.subscribed.widget).toBe('checkbox');
    expect(draft.ui.age.widget).toBe('number');
    expect(draft.ui.plan.widget).toBe('select');
    expect(draft.ui.site.widget).toBe('url');
    expect(draft.ui.homepage).not.toHaveProperty('widget');
    const orders = Object.values(draft.ui as Record<string, { order: number }>)
      .map((h) => h.order)
      .sort((a, b) => a - b);
    expect(orders).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  });

  it('does not publish; publishing the draft stores an inferred version the samples validate against', async () => {
    const formId = await createForm(t, key);
    await submitAll(formId, people);
    const { draft } = (await infer(formId, {})).json;

    const form = await t.api('GET', `/v1/forms/${formId}`, key);
    expect(form.json.current_schema_version).toBeNull();
    expect((await t.api('GET', `/v1/forms/${formId}/schema/versions`, key)).json.data).toEqual([]);
    expect((await t.api('GET', `/v1/forms/${formId}/schema`, key)).status).toBe(404);

    const published = await t.api('POST', `/v1/forms/${formId}/schema`, key, { json: draft });
    expect(published.status).toBe(201);
    expect(published.json).toMatchObject({
      version: 1,
      inferred: true,
      json_schema: draft.json_schema,
      ui: draft.ui,
      changelog: 'Inferred from 20 submissions',
    });
    expect((await t.api('GET', `/v1/forms/${formId}`, key)).json.current_schema_version).toBe(1);

    expect((await t.api('PATCH', `/v1/forms/${formId}`, key, { json: { schema_mode: 'enforce' } })).status).toBe(200);
    const statuses = await submitAll(formId, people);
    // Only the one sample without company (index 4, under the 5 % the draft may reject) is refused.
    expect(statuses).toEqual(people.map((_, i) => (i === 4 ? 'quarantined' : 'received')));
    expect((await post(formId, { ...people[0], age: 'forty' })).json.status).toBe('quarantined');
  });

  it('an optional email posted blank: the published draft accepts "" and still rejects a non-email', async () => {
    const formId = await createForm(t, key);
    const samples = ['a@example.com', '', 'b@example.com', 'c@example.com', '', 'd@example.com'].map((email, i) => ({
      email,
      name: `N${i}`,
    }));
    await submitAll(formId, samples);
    const r = await infer(formId);
    expect(r.json.draft.json_schema.properties.email).toEqual({
      type: 'string',
      anyOf: [{ format: 'email' }, { const: '' }],
    });
    expect(r.json.draft.json_schema.required).toEqual(['name']);
    expect(r.json.draft.ui.email.widget).toBe('email');

    expect((await t.api('POST', `/v1/forms/${formId}/schema`, key, { json: r.json.draft })).status).toBe(201);
    expect((await t.api('PATCH', `/v1/forms/${formId}`, key, { json: { schema_mode: 'enforce' } })).status).toBe(200);
    expect((await post(formId, { email: '', name: 'Blank' })).json.status).toBe('received');
    expect((await post(formId, { name: 'Absent' })).json.status).toBe('received');
    expect((await post(formId, { email: 'e@example.com', name: 'Full' })).json.status).toBe('received');
    expect((await post(formId, { email: 'nope', name: 'Bad' })).json.status).toBe('quarantined');
  });

  it('leaves out _test submissions unless include_test is true, and spam always', async () => {
    const formId = await createForm(t, key);
    await submitAll(formId, [
      { email: 'a@example.com', message: 'hi' },
      { email: 'b@example.com', message: 'yo' },
    ]);
    const tests = await submitAll(formId, [
      { email: 't1@example.com', message: 'test', debug: 1, _test: true },
      { email: 't2@example.com', message: 'test', debug: 2, _test: 'true' },
      { email: 't3@example.com', message: 'test', debug: 3, _test: '1' },
    ]);
    expect(tests).toEqual(['received', 'received', 'received']);
    const spam = await post(formId, { email: 's@example.com', spamfield: 'buy', _gotcha: 'bot' });
    expect(spam.json.status).toBe('spam');

    const real = await infer(formId);
    expect(real.status).toBe(200);
    expect(real.json.sample_size).toBe(2);
    expect(Object.keys(real.json.draft.json_schema.properties).sort()).toEqual(['email', 'message']);
    // Control fields never reach the data, so never the draft.
    expect(real.json.draft.json_schema.properties).not.toHaveProperty('_test');

    const all = await infer(formId, { include_test: true });
    expect(all.status).toBe(200);
    expect(all.json.sample_size).toBe(5);
    expect(all.json.draft.changelog).toBe('Inferred from 5 submissions');
    expect(Object.keys(all.json.draft.json_schema.properties).sort()).toEqual(['debug', 'email', 'message']);
    expect(all.json.draft.json_schema.properties.debug).toEqual({ type: 'integer' });
    expect(fieldOf(all.json.fields, 'debug')?.presence).toBe(0.6);
    expect(all.json.draft.json_schema.properties).not.toHaveProperty('spamfield');
  });

  it('reads only the newest `limit` submissions', async () => {
    const formId = await createForm(t, key);
    await submitAll(formId, [
      { email: 'old1@example.com', legacy: 'x' },
      { email: 'old2@example.com', legacy: 'y' },
      { email: 'old3@example.com', legacy: 'z' },
    ]);
    // Ids sort by millisecond: wait for the clock to move on so the next ones are strictly newer.
    const before = Date.now();
    while (Date.now() <= before + 1) await new Promise((resolve) => setTimeout(resolve, 2));
    await submitAll(formId, [{ email: 'new1@example.com' }, { email: 'new2@example.com' }]);

    const r = await infer(formId, { limit: 2 });
    expect(r.status).toBe(200);
    expect(r.json.sample_size).toBe(2);
    expect(r.json.draft.changelog).toBe('Inferred from 2 submissions');
    expect(Object.keys(r.json.draft.json_schema.properties)).toEqual(['email']);
    const one = await infer(formId, { limit: 1 });
    expect(one.json.draft.changelog).toBe('Inferred from 1 submission');
    const wide = await infer(formId, { limit: 1000 });
    expect(wide.json.sample_size).toBe(5);
    expect(fieldOf(wide.json.fields, 'legacy')?.presence).toBe(0.6);
  });

  it('a form with no received submissions is a 422 with a hint; only test ones hint at include_test', async () => {
    const formId = await createForm(t, key);
    const empty = await infer(formId);
    expect(empty.status).toBe(422);
    expect(empty.json.error.code).toBe('validation_failed');
    expect(empty.json.error.message).toContain(formId);
    expect(empty.json.error.hint).toContain(`POST /s/${formId}`);
    expect(empty.json.error.hint).toContain(`POST /v1/forms/${formId}/schema`);
    expect(empty.json.error.details.issues.length).toBeGreaterThan(0);

    await post(formId, { email: 'bot@example.com', _gotcha: 'filled' });
    expect((await infer(formId)).status).toBe(422);

    await post(formId, { email: 't@example.com', _test: true });
    const onlyTest = await infer(formId);
    expect(onlyTest.status).toBe(422);
    expect(onlyTest.json.error.hint).toContain('include_test');
    const included = await infer(formId, { include_test: true });
    expect(included.status).toBe(200);
    expect(included.json.sample_size).toBe(1);
    expect(included.json.draft.changelog).toBe('Inferred from 1 submission');
  });

  it('another organization’s form is a 404; a read-only key is a 403', async () => {
    const formId = await createForm(t, key);
    await post(formId, { email: 'a@example.com' });
    const foreign = await infer(formId, {}, otherKey);
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.code).toBe('not_found');
    expect(foreign.json.error.hint).toBeTruthy();
    expect(foreign.text).not.toContain('a@example.com');
    expect((await infer('fm_01h0000000000000000000000a')).status).toBe(404);
    const readOnly = await infer(formId, {}, readKey);
    expect(readOnly.status).toBe(403);
    expect(readOnly.json.error.code).toBe('forbidden');
    expect((await infer(formId, {})).status).toBe(200);
  });

  it('rejects a bad body with 422: limit out of range, wrong types, unknown keys', async () => {
    const formId = await createForm(t, key);
    await post(formId, { email: 'a@example.com' });
    for (const [json, path] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ limit: '10' }, 'limit'],
      [{ include_test: 'yes' }, 'include_test'],
      [{ sample: 10 }, null],
    ] as const) {
      const r = await infer(formId, json);
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.hint).toBeTruthy();
      expect(r.json.error.details.issues.length).toBeGreaterThan(0);
      if (path) expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    // Without a body every default applies.
    const none = await t.api('POST', `/v1/forms/${formId}/schema/infer`, key);
    expect(none.status).toBe(200);
    expect(none.json.sample_size).toBe(1);
  });
});
