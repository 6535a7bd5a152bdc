import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compileMatch, type MatchContext, matchIssue } from '../../server/domain/match.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

const ctx = (data: Record<string, unknown>, extra: Partial<MatchContext> = {}): MatchContext => ({
  data,
  meta: { origin: 'https://shop.example.net' },
  submission: { test: false, status: 'received' },
  ...extra,
});
const matches = (cond: unknown, data: Record<string, unknown>, extra?: Partial<MatchContext>) =>
  compileMatch(cond)(ctx(data, extra));

describe('the match compiler: operators', () => {
  it('a bare value means $eq; $eq and $ne compare numbers with numeric strings', () => {
    expect(matches({ 'data.topic': 'sales' }, { topic: 'sales' })).toBe(true);
    expect(matches({ 'data.topic': 'sales' }, { topic: 'support' })).toBe(false);
    expect(matches({ 'data.topic': 'sales' }, {})).toBe(false);
    expect(matches({ 'data.n': { $eq: 25 } }, { n: '25' })).toBe(true);
    expect(matches({ 'data.ok': true }, { ok: 'true' })).toBe(true);
    expect(matches({ 'data.topic': { $ne: 'sales' } }, { topic: 'support' })).toBe(true);
    expect(matches({ 'data.topic': { $ne: 'sales' } }, {})).toBe(true);
    expect(matches({ 'data.topic': { $ne: 'sales' } }, { topic: 'sales' })).toBe(false);
    expect(matches({ 'data.pair': { $eq: { b: 2, a: 1 } } }, { pair: { a: 1, b: 2 } })).toBe(true);
  });

  it('$in and $nin over a value or any element of a list', () => {
    expect(matches({ 'data.plan': { $in: ['pro', 'team'] } }, { plan: 'team' })).toBe(true);
    expect(matches({ 'data.plan': { $in: ['pro', 'team'] } }, { plan: 'free' })).toBe(false);
    expect(matches({ 'data.tags': { $in: ['vip'] } }, { tags: ['new', 'vip'] })).toBe(true);
    expect(matches({ 'data.plan': { $nin: ['pro', 'team'] } }, { plan: 'free' })).toBe(true);
    expect(matches({ 'data.plan': { $nin: ['pro', 'team'] } }, { plan: 'pro' })).toBe(false);
  });

  it('$gt $gte $lt $lte compare numbers (numeric strings too) and strings as text', () => {
    const c = (op: string, v: unknown) => matches({ 'data.amount': { [op]: 100 } }, { amount: v });
    expect([c('$gt', 100), c('$gte', 100), c('$lt', 100), c('$lte', 100)]).toEqual([false, true, false, true]);
    expect([c('$gt', 250.5), c('$lt', 99), c('$gt', '101')]).toEqual([true, true, true]);
    expect([c('$gt', 'lots'), c('$lt', null), c('$lt', undefined)]).toEqual([false, false, false]);
    expect(matches({ 'data.day': { $gte: '2026-01-01' } }, { day: '2026-03-04' })).toBe(true);
    expect(matches({ 'data.day': { $gte: '2026-01-01' } }, { day: 5 })).toBe(false);
  });

  it('$exists and $contains on a string and on a list', () => {
    expect(matches({ 'data.phone': { $exists: true } }, { phone: '+49' })).toBe(true);
    expect(matches({ 'data.phone': { $exists: true } }, {})).toBe(false);
    expect(matches({ 'data.phone': { $exists: false } }, {})).toBe(true);
    expect(matches({ 'data.phone': { $exists: false } }, { phone: null })).toBe(true);
    expect(matches({ 'data.m': { $contains: 'urgent' } }, { m: 'this is urgent' })).toBe(true);
    expect(matches({ 'data.m': { $contains: 'urgent' } }, { m: 'no hurry' })).toBe(false);
    expect(matches({ 'data.tags': { $contains: 'vip' } }, { tags: ['vip'] })).toBe(true);
    expect(matches({ 'data.tags': { $contains: 'vip' } }, { tags: ['vipish'] })).toBe(false);
    expect(matches({ 'data.n': { $contains: 'x' } }, { n: 5 })).toBe(false);
  });

  it('$and, $or, $not (as a combinator and on a field), several keys all holding, dotted paths', () => {
    const and = { $and: [{ 'data.plan': 'pro' }, { 'data.seats': { $gte: 5 } }] };
    expect(matches(and, { plan: 'pro', seats: 10 })).toBe(true);
    expect(matches(and, { plan: 'pro', seats: 2 })).toBe(false);
    const or = { $or: [{ 'data.plan': 'enterprise' }, { 'data.address.country': 'DE' }] };
    expect(matches(or, { plan: 'pro', address: { country: 'DE' } })).toBe(true);
    expect(matches(or, { plan: 'pro', address: 'DE' })).toBe(false);
    expect(matches({ $not: { 'data.plan': 'free' } }, { plan: 'pro' })).toBe(true);
    expect(matches({ $not: { 'data.plan': 'free' } }, { plan: 'free' })).toBe(false);
    expect(matches({ 'data.plan': { $not: 'free' } }, { plan: 'pro' })).toBe(true);
    expect(matches({ 'data.plan': { $not: { $in: ['free', 'trial'] } } }, { plan: 'trial' })).toBe(false);
    expect(matches({ 'data.plan': 'pro', 'data.seats': { $gt: 1, $lt: 10 } }, { plan: 'pro', seats: 5 })).toBe(true);
    expect(matches({ 'data.plan': 'pro', 'data.seats': { $gt: 1, $lt: 10 } }, { plan: 'pro', seats: 50 })).toBe(false);
    expect(matches({ 'data.items.1.sku': 'b' }, { items: [{ sku: 'a' }, { sku: 'b' }] })).toBe(true);
    expect(matches({ 'data.a.constructor': { $exists: true } }, { a: {} })).toBe(false);
  });

  it('reads meta and submission.test / submission.status', () => {
    expect(matches({ 'meta.origin': 'https://shop.example.net' }, {})).toBe(true);
    expect(matches({ 'submission.test': true }, {}, { submission: { test: true, status: 'received' } })).toBe(true);
    expect(matches({ 'submission.status': 'spam' }, {}, { submission: { test: false, status: 'spam' } })).toBe(true);
    expect(matches({ 'submission.status': 'spam' }, {})).toBe(false);
  });
});

describe('the match compiler: validation names the bad part', () => {
  const cases: [unknown, string][] = [
    [{ $and: [{ 'data.a': 1 }, { 'data.age': { $gtx: 3 } }] }, 'match.$and.1.data.age.$gtx'],
    [{ age: 3 }, 'match.age'],
    [{ 'data.': 3 }, 'match.data.'],
    [{ data: 3 }, 'match.data'],
    [{ 'submission.id': 'x' }, 'match.submission.id'],
    [{ $nor: [] }, 'match.$nor'],
    [{ $or: [] }, 'match.$or'],
    [{ $or: {} }, 'match.$or'],
    [{ $and: [3] }, 'match.$and.0'],
    [{ 'data.a': { $in: 'x' } }, 'match.data.a.$in'],
    [{ 'data.a': { $exists: 'yes' } }, 'match.data.a.$exists'],
    [{ 'data.a': { $gt: [1] } }, 'match.data.a.$gt'],
    [{ 'data.a': { $eq: 1, plain: 2 } }, 'match.data.a'],
    [{ 'data.a': { x: { $eq: 1 } } }, 'match.data.a.x.$eq'],
    [{ 'data.a': 'x'.repeat(1001) }, 'match.data.a'],
    ['data.a', 'match'],
  ];
  it.each(cases)('%j → %s', (cond, path) => {
    expect(matchIssue(cond)?.path).toBe(path);
  });

  it('refuses a condition deeper than 8 levels or over 100 parts', () => {
    let deep: Record<string, unknown> = { 'data.a': 1 };
    for (let i = 0; i < 9; i += 1) deep = { $not: deep };
    expect(matchIssue(deep)?.message).toMatch(/deeper than 8/);
    const wide = { $or: Array.from({ length: 101 }, (_, i) => ({ 'data.a': i })) };
    expect(matchIssue(wide)?.message).toMatch(/more than 100 parts/);
    expect(matchIssue({ 'data.a': { $in: Array.from({ length: 120 }, (_, i) => i) } })?.message).toMatch(/100 parts/);
    expect(matchIssue({ $or: Array.from({ length: 40 }, (_, i) => ({ 'data.a': i })) })).toBeNull();
  });
});

const { t, key, otherKey } = await tenantApp({ worker: true });
const receiver = fileReceivers();

async function hookRoute(source: Record<string, string>, match: unknown) {
  const hook = await receiver();
  const dest = await t.api('POST', '/v1/destinations', key, {
    json: { type: 'webhook', name: 'h', config: { url: hook.url } },
  });
  expect(dest.status).toBe(201);
  const r = await t.api('POST', '/v1/routes', key, { json: { ...source, destination_id: dest.json.id, match } });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return { hook, route: r.json };
}

const newForm = async () =>
  (await t.api('POST', '/v1/forms', key, { json: { name: `M ${crypto.randomUUID().slice(0, 8)}` } })).json;

async function submit(formId: string, data: Record<string, unknown>) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

const deliveriesOf = async (submissionId: string) =>
  (await t.api('GET', `/v1/deliveries?submission_id=${submissionId}`, key)).json.data as any[];

describe('routes with match over the API', () => {
  it('stores and shows match; refuses a bad one with 422 naming the part; PATCH replaces and null removes', async () => {
    const form = await newForm();
    const { route } = await hookRoute({ form_id: form.id }, { 'data.topic': 'sales' });
    expect(route.match).toEqual({ 'data.topic': 'sales' });
    const dest = route.destination_id;
    const bad = await t.api('POST', '/v1/routes', key, {
      json: { form_id: form.id, destination_id: dest, match: { $and: [{ 'data.a': 1 }, { 'data.age': { $gtx: 1 } }] } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe('validation_failed');
    expect(bad.json.error.hint).toBeTruthy();
    expect(bad.json.error.details.issues[0].path).toBe('match.$and.1.data.age.$gtx');
    const digest = await t.api('POST', '/v1/routes', key, {
      json: {
        form_id: form.id,
        destination_id: dest,
        mode: { type: 'digest', cron: '0 9 * * *', timezone: 'UTC' },
        match: { 'data.a': 1 },
      },
    });
    expect(digest.status).toBe(422);
    const patched = await t.api('PATCH', `/v1/routes/${route.id}`, key, {
      json: { match: { 'data.topic': 'support' } },
    });
    expect(patched.json.match).toEqual({ 'data.topic': 'support' });
    const badPatch = await t.api('PATCH', `/v1/routes/${route.id}`, key, {
      json: { match: { 'data.x': { $regex: 'a' } } },
    });
    expect(badPatch.status).toBe(422);
    expect(badPatch.json.error.details.issues[0].path).toBe('match.data.x.$regex');
    const cleared = await t.api('PATCH', `/v1/routes/${route.id}`, key, { json: { match: null } });
    expect(cleared.json.match).toBeNull();
    expect((await t.api('PATCH', `/v1/routes/${route.id}`, otherKey, { json: { match: null } })).status).toBe(404);
    const reserved = await t.api('POST', '/v1/routes', key, {
      json: { form_id: form.id, destination_id: dest, filter: 'x' },
    });
    expect(reserved.json.error.code).toBe('expressions_not_enabled');
  });

  it('plans a non-matching route skipped with skip_reason match, listed by /v1/deliveries, never sent', async () => {
    const form = await newForm();
    const sales = await hookRoute({ form_id: form.id }, { 'data.topic': 'sales' });
    const support = await hookRoute({ form_id: form.id }, { 'data.topic': 'support' });
    const sid = await submit(form.id, { topic: 'sales', name: 'Ada' });
    const ds = await deliveriesOf(sid);
    const mine = (r: { route: { id: string } }) => ds.find((d) => d.route_id === r.route.id);
    expect(mine(support)).toMatchObject({ status: 'skipped', skip_reason: 'match', attempts: 0 });
    expect(mine(sales).status).not.toBe('skipped');
    await until('the sales webhook', async () => (sales.hook.requests.length ? true : null), 15_000);
    const log = await t.api('GET', `/v1/deliveries?route_id=${support.route.id}&status=skipped`, key);
    expect(log.json.data.map((d: any) => [d.id, d.skip_reason])).toEqual([[mine(support).id, 'match']]);
    await new Promise((r) => setTimeout(r, 500));
    expect(support.hook.requests).toHaveLength(0);
  });

  it('a change of match applies to the next submission (the intake cache is refreshed)', async () => {
    const form = await newForm();
    const r = await hookRoute({ form_id: form.id }, { 'data.topic': 'sales' });
    const a = await submit(form.id, { topic: 'support' });
    expect((await deliveriesOf(a))[0].skip_reason).toBe('match');
    await t.api('PATCH', `/v1/routes/${r.route.id}`, key, { json: { match: { 'data.topic': 'support' } } });
    const b = await submit(form.id, { topic: 'support' });
    expect((await deliveriesOf(b))[0].status).not.toBe('skipped');
  });

  it('on a stream route, matches the mapped payload (stream field names, defaults), not the form fields', async () => {
    const form = await newForm();
    const slug = `m-${crypto.randomUUID().slice(0, 8)}`;
    const stream = await t.api('POST', '/v1/streams', key, {
      json: {
        name: slug,
        slug,
        schema: {
          json_schema: {
            type: 'object',
            required: ['customer_name'],
            properties: { customer_name: { type: 'string' }, country: { type: 'string' } },
          },
        },
        sources: [
          {
            form_id: form.id,
            mapping: { customer_name: { from: 'fullName' }, country: { from: 'cty', default: 'NL' } },
          },
        ],
      },
    });
    expect(stream.status, JSON.stringify(stream.json)).toBe(201);
    const src = { stream_id: stream.json.id };
    const mapped = await hookRoute(src, { 'data.customer_name': 'Ada L' });
    const dflt = await hookRoute(src, { 'data.country': 'NL' });
    const raw = await hookRoute(src, { 'data.fullName': 'Ada L' });
    const sid = await submit(form.id, { fullName: 'Ada L' });
    const ds = await deliveriesOf(sid);
    const st = (r: { route: { id: string } }) => ds.find((d) => d.route_id === r.route.id)?.skip_reason ?? 'planned';
    expect([st(mapped), st(dflt), st(raw)]).toEqual(['planned', 'planned', 'match']);
    const [req] = await until(
      'the mapped webhook',
      async () => (mapped.hook.requests.length ? mapped.hook.requests : null),
      15_000,
    );
    expect(req.json.data.customer_name).toBe('Ada L');
  });
});
