import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchFromForm, matchValues } from '../../server/dashboard/pages/route-match.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { dashboardSession } from '../helpers/dashboard.js';

let t: TestEnv;
let s: Awaited<ReturnType<typeof dashboardSession>>;

beforeAll(async () => {
  t = await startTestApp();
  s = await dashboardSession(t);
});
afterAll(() => t.close());

const uniq = (p: string) => `${p} ${crypto.randomUUID().slice(0, 6)}`;

async function setup() {
  const dest = await t.api('POST', '/v1/destinations', s.key, {
    json: { type: 'webhook', name: uniq('Hook'), config: { url: 'https://hooks.example.net/x' } },
  });
  const form = await t.api('POST', '/v1/forms', s.key, { json: { name: uniq('Contact') } });
  return { destId: dest.json.id as string, formId: form.json.id as string };
}

const postRoute = (path: string, destinationId: string, fields: Record<string, string>) =>
  s.post(path, {
    _sent: '1',
    destination_id: destinationId,
    mode: 'instant',
    timezone: 'UTC',
    enabled: 'on',
    ...fields,
  });

describe('the condition builder (pure)', () => {
  it('rows become a condition joined by all or any; a bare field name means data.<name>', () => {
    expect(matchFromForm({})).toBeNull();
    expect(matchFromForm({ m_field_0: 'topic', m_op_0: '$eq', m_value_0: 'sales' })).toEqual({ 'data.topic': 'sales' });
    expect(
      matchFromForm({
        m_join: 'any',
        m_field_0: 'meta.origin',
        m_op_0: '$eq',
        m_value_0: 'https://shop.example.net',
        m_field_1: 'amount',
        m_op_1: '$gte',
        m_value_1: '100',
        m_field_2: 'plan',
        m_op_2: '$in',
        m_value_2: 'pro, team',
        m_field_3: 'phone',
        m_op_3: '$absent',
      }),
    ).toEqual({
      $or: [
        { 'meta.origin': 'https://shop.example.net' },
        { 'data.amount': { $gte: 100 } },
        { 'data.plan': { $in: ['pro', 'team'] } },
        { 'data.phone': { $exists: false } },
      ],
    });
    expect(matchFromForm({ match_json: '{"data.a": 1}', m_field_0: 'x', m_value_0: 'y' })).toEqual({ 'data.a': 1 });
    expect(matchFromForm({ match_json: '{not json' })).toBe('{not json');
  });

  it('a stored condition comes back as rows when it fits them, else as JSON', () => {
    const rows = {
      $and: [{ 'data.topic': 'sales' }, { 'data.amount': { $gt: 5 } }, { 'data.tags': { $nin: ['a', 'b'] } }],
    };
    expect(matchFromForm(matchValues(rows))).toEqual(rows);
    const nested = { $or: [{ $and: [{ 'data.a': 1 }] }] };
    expect(matchValues(nested)).toEqual({ match_json: JSON.stringify(nested, null, 2) });
    expect(matchFromForm(matchValues(nested))).toEqual(nested);
  });
});

describe('route pages with a condition', () => {
  it('creates a route from rows, shows them on its edit page, and refuses a bad condition naming the part', async () => {
    const { destId, formId } = await setup();
    const page = await s.get(`/app/routes/new?destination_id=${destId}`);
    expect(page.html).toContain('name="m_field_0"');
    expect(page.html).toContain('name="m_op_2"');
    expect(page.html).toContain('name="match_json"');
    expect(page.html).not.toMatch(/<script(?![^>]*\bsrc=)/);

    const made = await postRoute('/app/routes', destId, {
      source: `form:${formId}`,
      m_join: 'all',
      m_field_0: 'topic',
      m_op_0: '$eq',
      m_value_0: 'sales',
      m_field_1: 'seats',
      m_op_1: '$gte',
      m_value_1: '5',
    });
    expect(made.status).toBe(303);
    const [route] = (await t.api('GET', `/v1/routes?destination_id=${destId}`, s.key)).json.data;
    expect(route.match).toEqual({ $and: [{ 'data.topic': 'sales' }, { 'data.seats': { $gte: 5 } }] });
    expect((await s.get('/app/routes')).html).toContain('only when');

    const edit = await s.get(`/app/routes/${route.id}`);
    expect(edit.html).toMatch(/name="m_field_0" value="topic"|value="data.topic"/);
    expect(edit.html).toContain('value="data.seats"');
    expect(edit.html).toMatch(/<option value="\$gte" selected/);
    expect(edit.html).toContain('name="m_field_2"');

    const bad = await postRoute(`/app/routes/${route.id}`, destId, {
      match_json: '{"$and": [{"data.a": 1}, {"data.age": {"$gtx": 3}}]}',
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('id="route-match-error"');
    expect(bad.html).toContain('match.$and.1.data.age.$gtx');
    expect(bad.html).toContain('$gtx'); // the JSON typed is kept
    const notJson = await postRoute(`/app/routes/${route.id}`, destId, { match_json: '{oops' });
    expect(notJson.status).toBe(422);
    expect(notJson.html).toContain('id="route-match-error"');

    const any = await postRoute(`/app/routes/${route.id}`, destId, {
      m_join: 'any',
      m_field_0: 'data.topic',
      m_op_0: '$ne',
      m_value_0: 'spam',
      m_field_1: 'message',
      m_op_1: '$contains',
      m_value_1: 'urgent',
    });
    expect(any.status).toBe(303);
    expect((await t.api('GET', `/v1/routes/${route.id}`, s.key)).json.match).toEqual({
      $or: [{ 'data.topic': { $ne: 'spam' } }, { 'data.message': { $contains: 'urgent' } }],
    });

    const cleared = await postRoute(`/app/routes/${route.id}`, destId, {});
    expect(cleared.status).toBe(303);
    expect((await t.api('GET', `/v1/routes/${route.id}`, s.key)).json.match).toBeNull();
  });

  it('the condition decides delivery: a non-matching submission is logged skipped (match) on the deliveries page', async () => {
    const { destId, formId } = await setup();
    await postRoute('/app/routes', destId, { source: `form:${formId}`, m_field_0: 'topic', m_value_0: 'sales' });
    const r = await t.request('POST', `/s/${formId}`, {
      json: { topic: 'support' },
      headers: { accept: 'application/json' },
    });
    const [d] = (await t.api('GET', `/v1/deliveries?submission_id=${r.json.submission_id}`, s.key)).json.data;
    expect(d).toMatchObject({ status: 'skipped', skip_reason: 'match' });
    const log = await s.get(`/app/deliveries?destination_id=${destId}`);
    expect(log.html).toContain('(match)');
  });
});
