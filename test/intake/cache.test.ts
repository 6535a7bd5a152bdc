import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intakeEntry } from '../../server/intake/cache.js';
import { writeInOneStatement } from '../../server/intake/write.js';
import { newId } from '../../shared/ids.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/**
 * Intake keeps each form's configuration in memory and writes in one statement guarded by the
 * organization's config_gen. Changes made behind this process's back (plain SQL, as another
 * process would) must be seen by the next submission.
 */
let t: TestEnv;
let key: string;
let formId: string;

const rows = <T = Record<string, unknown>>(q: ReturnType<typeof sql>) => t.deps.database.rows<T>(q);
const submit = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', `/s/${formId}`, { json: { _test: true, ...body }, headers });

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
  formId = (await t.api('POST', '/v1/forms', key, { json: { name: 'Cached' } })).json.id;
});
afterAll(() => t.close());

describe('intake cache', () => {
  it('plans against a route created after the form was cached', async () => {
    const first = await submit({ a: 1 });
    expect(first.status).toBe(200);
    expect(first.json.deliveries).toEqual([]);
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'hook', config: { url: 'http://127.0.0.1:9/hook' } },
    });
    expect(dest.status).toBe(201);
    const route = await t.api('POST', '/v1/routes', key, { json: { form_id: formId, destination_id: dest.json.id } });
    expect(route.status).toBe(201);
    const second = await submit({ a: 2 });
    expect(second.json.deliveries).toHaveLength(1);
    const [d] = await rows<{ route_id: string; status: string }>(
      sql`select route_id, status from deliveries where submission_id = ${second.json.submission_id}`,
    );
    expect(d).toEqual({ route_id: route.json.id, status: 'pending' });
  });

  it('sees a route disabled by plain SQL (another process) at the next submission', async () => {
    expect((await submit({ a: 3 })).json.deliveries).toHaveLength(1);
    await rows(sql`update routes set enabled = false where form_id = ${formId}`);
    const after = await submit({ a: 4 });
    expect(after.status).toBe(200);
    expect(after.json.deliveries).toEqual([]);
    await rows(sql`update routes set enabled = true where form_id = ${formId}`);
    expect((await submit({ a: 5 })).json.deliveries).toHaveLength(1);
  });

  it('sees settings changed by plain SQL: a new origin list quarantines at once', async () => {
    const allowed = await submit({ a: 6 }, { origin: 'https://other.example' });
    expect(allowed.status).toBe(200);
    await rows(
      sql`update forms set settings = ${JSON.stringify({ allowed_origins: ['https://site.example'] })}::jsonb where id = ${formId}`,
    );
    const refused = await submit({ a: 7 }, { origin: 'https://other.example' });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('origin_rejected');
    const [s] = await rows<{ status: string; quarantine_reason: string }>(
      sql`select status, quarantine_reason from submissions where id = ${refused.json.error.details.submission_id}`,
    );
    expect(s).toEqual({ status: 'quarantined', quarantine_reason: 'origin_rejected' });
    await rows(sql`update forms set settings = '{}'::jsonb where id = ${formId}`);
  });

  it('plans a system-webhook delivery for a subscription inserted by plain SQL', async () => {
    const [org] = await rows<{ org_id: string }>(sql`select org_id from forms where id = ${formId}`);
    const hookId = newId('webhook');
    await rows(sql`insert into system_webhooks (id, org_id, url, events) values
      (${hookId}, ${org.org_id}, 'http://127.0.0.1:9/system', ${'{submission.received}'}::text[])`);
    const res = await submit({ a: 8 });
    const [n] = await rows<{ n: number }>(
      sql`select count(*)::int as n from system_webhook_deliveries d join events e on e.id = d.event_id
          where d.webhook_id = ${hookId} and e.subject->>'submission_id' = ${res.json.submission_id}`,
    );
    expect(n.n).toBe(1);
  });

  it('answers a repeated idempotency key with the first submission, stored once', async () => {
    const one = await submit({ a: 9 }, { 'idempotency-key': 'cache-k1' });
    const two = await submit({ a: 10 }, { 'idempotency-key': 'cache-k1' });
    expect(two.status).toBe(200);
    expect(two.json.submission_id).toBe(one.json.submission_id);
    expect(two.json.idempotent).toBe(true);
    expect(two.json.deliveries).toEqual(one.json.deliveries);
    const [n] = await rows<{ n: number }>(
      sql`select count(*)::int as n from submissions where form_id = ${formId} and idempotency_key = 'cache-k1'`,
    );
    expect(n.n).toBe(1);
  });

  it('writes nothing when the gen it decided with is stale', async () => {
    const entry = await intakeEntry(t.deps.database, formId);
    const id = newId('submission');
    const now = new Date();
    const out = await writeInOneStatement(
      t.deps.database,
      { ...entry, gen: entry.gen - 1 },
      {
        id,
        orgId: entry.org.id,
        formId,
        status: 'received',
        quarantineReason: null,
        test: true,
        data: { stale: true },
        formSchemaVersion: null,
        issues: null,
        drift: null,
        spam: { score: 0, reasons: [] },
        meta: {},
        clientIp: '127.0.0.1',
        idempotencyKey: null,
        subjectHint: null,
        receivedAt: now,
        duplicateOf: null,
        spamFingerprint: null,
        spamAddress: null,
      },
      [],
      'submission.received',
    );
    expect(out.result).toBe('stale');
    const [n] = await rows<{ n: number }>(sql`select count(*)::int as n from submissions where id = ${id}`);
    expect(n.n).toBe(0);
  });

  it('answers 404 once the form is deleted behind its back', async () => {
    expect((await submit({ a: 11 })).status).toBe(200);
    await rows(sql`delete from forms where id = ${formId}`);
    const gone = await submit({ a: 12 });
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('not_found');
  });
});
