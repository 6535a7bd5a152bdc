import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { normalised, uniqueClaimOf } from '../../server/intake/unique.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

describe('unique values', () => {
  it('are trimmed and case-folded; numbers and their strings agree; lists in any order', () => {
    expect(normalised('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(normalised(25)).toBe(normalised('25'));
    expect(normalised(['b', 'A'])).toEqual(normalised(['a', 'B']));
    const now = new Date();
    const k = (data: Record<string, unknown>) => uniqueClaimOf({ fields: ['email', 'event'] }, 'frm_1', data, now)?.key;
    expect(k({ email: 'A@x.net', event: 'Gala' })).toBe(k({ email: ' a@x.net', event: 'gala ' }));
    expect(k({ email: 'a@x.net', event: 'gala' })).not.toBe(k({ email: 'a@x.net', event: 'ball' }));
    expect(uniqueClaimOf({ fields: ['email'] }, 'frm_2', { email: 'a@x.net' }, now)?.key).not.toBe(
      uniqueClaimOf({ fields: ['email'] }, 'frm_1', { email: 'a@x.net' }, now)?.key,
    );
    expect(k({ email: 'a@x.net' })).toBeUndefined();
    expect(k({ email: '  ', event: 'gala' })).toBeUndefined();
    expect(uniqueClaimOf({ fields: [] }, 'frm_1', { email: 'a' }, now)).toBeNull();
    expect(uniqueClaimOf({ fields: ['email'], window_days: 2 }, 'f', { email: 'a' }, now)?.expiresAt?.getTime()).toBe(
      now.getTime() + 2 * 86_400_000,
    );
  });
});

const { t, key, otherKey } = await tenantApp({ worker: true });
const receiver = fileReceivers();

async function uniqueForm(unique: Record<string, unknown>) {
  const r = await t.api('POST', '/v1/forms', key, { json: { name: `U ${crypto.randomUUID().slice(0, 8)}` } });
  expect(r.status).toBe(201);
  const p = await t.api('PATCH', `/v1/forms/${r.json.id}`, key, { json: { settings: { unique } } });
  expect(p.status, JSON.stringify(p.json)).toBe(200);
  return p.json as { id: string; name: string };
}

async function post(formId: string, data: Record<string, unknown>) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json as { submission_id: string; status: string; ok: boolean; duplicate?: boolean };
}

const submission = async (id: string, k = key) => (await t.api('GET', `/v1/submissions/${id}`, k)).json;

describe('settings.unique', () => {
  it('stores a repeat quarantined/duplicate naming the first; only the first is delivered', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const hook = await receiver();
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'h', config: { url: hook.url } },
    });
    await t.api('POST', '/v1/routes', key, { json: { form_id: form.id, destination_id: dest.json.id } });
    const a = await post(form.id, { email: 'Ada@Example.net', n: 1 });
    expect(a).toMatchObject({ ok: true, status: 'received' });
    expect(a.duplicate).toBeUndefined();
    const b = await post(form.id, { email: '  ada@EXAMPLE.net ', n: 2 });
    const c = await post(form.id, { email: 'ada@example.net', n: 3 });
    for (const r of [b, c]) {
      expect(r).toMatchObject({ ok: false, status: 'quarantined', duplicate: true });
      expect(await submission(r.submission_id)).toMatchObject({
        status: 'quarantined',
        quarantine_reason: 'duplicate',
        duplicate_of: a.submission_id,
      });
    }
    expect((await submission(a.submission_id)).duplicate_of).toBeNull();
    expect((await t.api('GET', `/v1/submissions/${b.submission_id}`, otherKey)).status).toBe(404);
    await until('the first webhook', async () => (hook.requests.length ? true : null), 15_000);
    await new Promise((r) => setTimeout(r, 800));
    expect(hook.requests).toHaveLength(1);
    expect(hook.requests[0].json.submission.id).toBe(a.submission_id);
    // Another person, and a submission without the field, are not duplicates.
    expect((await post(form.id, { email: 'bob@example.net' })).status).toBe('received');
    expect((await post(form.id, { name: 'no email' })).status).toBe('received');
    expect((await post(form.id, { name: 'no email' })).status).toBe('received');
  });

  it('spam and _test submissions neither claim nor are checked', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const spam = await post(form.id, { email: 'eve@example.net', _gotcha: 'x' });
    expect(spam.status).toBe('spam');
    const test = await post(form.id, { email: 'eve@example.net', _test: true });
    expect(test.status).toBe('received');
    expect((await post(form.id, { email: 'eve@example.net' })).status).toBe('received');
    expect((await post(form.id, { email: 'eve@example.net', _test: true })).status).toBe('received');
    expect((await post(form.id, { email: 'eve@example.net', _gotcha: 'x' })).status).toBe('spam');
  });

  it('an HTML repeat gets a page saying it was already received; the first the ordinary 303', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const html = (body: string) =>
      t.request('POST', `/s/${form.id}`, {
        body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      });
    expect((await html('email=kim%40example.net')).status).toBe(303);
    const again = await html('email=KIM%40example.net');
    expect(again.status).toBe(200);
    expect(again.text).toMatch(/already received/i);
    expect(again.text).toContain(form.name);
  });

  it('a claim expires after window_days: the next one is received and becomes the first', async () => {
    const form = await uniqueForm({ fields: ['email'], window_days: 1 });
    const a = await post(form.id, { email: 'win@example.net' });
    expect((await post(form.id, { email: 'win@example.net' })).duplicate).toBe(true);
    await t.deps.database.rows(
      sql`update unique_claims set expires_at = now() - interval '1 second' where form_id = ${form.id}`,
    );
    const c = await post(form.id, { email: 'win@example.net' });
    expect(c.status).toBe('received');
    const d = await post(form.id, { email: 'win@example.net' });
    expect((await submission(d.submission_id)).duplicate_of).toBe(c.submission_id);
    expect(c.submission_id).not.toBe(a.submission_id);
  });

  it('with an idempotency key: a repeat of the key is the original, a new key with the same values a duplicate', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const withKey = (k: string) =>
      t.request('POST', `/s/${form.id}`, {
        json: { email: 'idem@example.net' },
        headers: { accept: 'application/json', 'idempotency-key': k },
      });
    const a = (await withKey('k1')).json;
    expect(a.status).toBe('received');
    const again = (await withKey('k1')).json;
    expect(again).toMatchObject({ submission_id: a.submission_id, idempotent: true });
    const b = (await withKey('k2')).json;
    expect(b).toMatchObject({ status: 'quarantined', duplicate: true });
    expect((await submission(b.submission_id)).duplicate_of).toBe(a.submission_id);
  });

  it('deleting the first submission frees its values', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const a = await post(form.id, { email: 'del@example.net' });
    await t.deps.database.rows(sql`delete from submissions where id = ${a.submission_id}`);
    expect((await post(form.id, { email: 'del@example.net' })).status).toBe('received');
  });

  it('10 parallel posts of the same email: exactly one received, nine duplicates of it', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(form.id, { email: 'race@example.net' })));
    const received = answers.filter((a) => a.status === 'received');
    expect(received).toHaveLength(1);
    const dups = answers.filter((a) => a.duplicate);
    expect(dups).toHaveLength(9);
    for (const d of dups) expect((await submission(d.submission_id)).duplicate_of).toBe(received[0].submission_id);
  });

  it('refuses invalid settings.unique with 422', async () => {
    const form = await uniqueForm({ fields: ['email'] });
    const patch = (unique: unknown) => t.api('PATCH', `/v1/forms/${form.id}`, key, { json: { settings: { unique } } });
    expect((await patch({ fields: [] })).status).toBe(422);
    expect((await patch({ fields: ['email'], window_days: -1 })).status).toBe(422);
    expect((await patch({ field: ['email'] })).status).toBe(422);
    expect((await patch(null)).json.settings.unique).toBeUndefined();
  });
});
