import crypto from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { attachments, deliveries, events, submissions, systemWebhookDeliveries } from '../../server/db/schema.js';
import { newId } from '../../shared/ids.js';
import { createForm, seedAttachment, seedDelivery, seedSubmission } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, orgId, readKey, otherKey, otherOrgId } = await tenantApp();

const address = () => `Erase.${crypto.randomUUID().slice(0, 8)}@Example.com`;
const erase = (body: unknown, k = key, headers: Record<string, string> = {}) =>
  t.api('POST', '/v1/submissions/erase', k, { json: body, headers });

const exists = async (id: string) =>
  (await t.deps.database.db.select({ id: submissions.id }).from(submissions).where(eq(submissions.id, id))).length ===
  1;
const fileExists = (storageKey: string) =>
  new Promise<boolean>((resolve) => {
    const s = t.deps.storage.read(storageKey);
    s.on('error', () => resolve(false));
    s.on('readable', () => {
      s.destroy();
      resolve(true);
    });
  });

/** Two forms with the address in different fields (one with a file and deliveries), and a bystander. */
async function people(addr: string) {
  const f1 = await createForm(t, key);
  const f2 = await createForm(t, key);
  const a = await seedSubmission(t, { orgId, formId: f1, data: { email: addr, name: 'Ada' } });
  const file = await seedAttachment(t, { orgId, formId: f1, submissionId: a.id });
  const sent = await seedDelivery(t, {
    orgId,
    submissionId: a.id,
    formId: f1,
    status: 'sent',
    payload: { data: { email: addr } },
    lastResponse: { status: 200, body: `thanks ${addr}` },
  });
  const pending = await seedDelivery(t, { orgId, submissionId: a.id, formId: f1, payload: { data: { email: addr } } });
  const b = await seedSubmission(t, { orgId, formId: f2, data: { contact: { reply_to: ` ${addr.toUpperCase()} ` } } });
  const bystander = await seedSubmission(t, { orgId, formId: f2, data: { email: `other.${addr}` } });
  const item = (s: { id: string; data: unknown }) => ({ id: s.id, status: 'received', data: s.data, meta: {} });
  const digest = await seedDelivery(t, {
    orgId,
    submissionId: null,
    formId: f2,
    status: 'sent',
    payload: { type: 'digest.ready', count: 2, submissions: [item(b), item(bystander)] },
    lastResponse: { status: 200, body: `got ${addr} and another` },
    lastError: `receiver choked on ${addr}`,
  });
  const traces = await plantTraces(addr, f1);
  const otherForm = await createForm(t, otherKey);
  const theirs = await seedSubmission(t, { orgId: otherOrgId, formId: otherForm, data: { email: addr } });
  return { f1, f2, a, b, file, sent, pending, bystander, theirs, otherForm, digest, item, traces };
}

/**
 * The address where receivers' words copied it: a delivery.dead event's data.error, a
 * destination.failing event's data.last_error, and a system-webhook delivery's payload (that
 * event), last response and last error. A bystander's longer address beside it must stay.
 */
async function plantTraces(addr: string, formId: string) {
  const db = t.deps.database.db;
  const now = new Date();
  const bystander = `other.${addr}`;
  const [dead, failing] = await db
    .insert(events)
    .values([
      {
        id: newId('event'),
        orgId,
        type: 'delivery.dead',
        subject: { delivery_id: 'dl_x', form_id: formId },
        data: {
          attempts: 5,
          status_code: 422,
          error: `HTTP 422: ${addr.toUpperCase()} is not on the list; ${bystander} is`,
        },
        createdAt: now,
      },
      {
        id: newId('event'),
        orgId,
        type: 'destination.failing',
        subject: { destination_id: 'ds_x' },
        data: { consecutive_failures: 3, last_error: `answered 500: unknown user <${addr}>` },
        createdAt: now,
      },
    ])
    .returning();
  const [hook] = await db
    .insert(systemWebhookDeliveries)
    .values({
      id: newId('webhookDelivery'),
      orgId,
      webhookId: 'wh_x',
      eventId: dead.id,
      eventType: dead.type,
      status: 'dead',
      maxAttempts: 10,
      payload: { id: dead.id, type: dead.type, data: dead.data },
      lastResponse: { status: 400, body: `no such contact ${addr}` },
      lastError: `HTTP 400: no such contact ${addr}`,
      createdAt: now,
    })
    .returning();
  return { dead, failing, hook, bystander };
}

describe('POST /v1/submissions/erase', () => {
  it('dry_run counts and deletes nothing', async () => {
    const addr = address();
    const p = await people(addr);
    const r = await erase({ email: addr, dry_run: true });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ matched: 2, deleted: 0, files_deleted: 0, dry_run: true });
    for (const s of [p.a, p.b, p.bystander]) expect(await exists(s.id)).toBe(true);
    expect(await fileExists(p.file.storageKey)).toBe(true);
  });

  it('deletes the address’s submissions and files, keeps delivery rows without personal data, records a hash', async () => {
    const addr = address();
    const p = await people(addr);
    const r = await erase({ email: `  ${addr.toLowerCase()} ` });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ matched: 2, deleted: 2, files_deleted: 1, dry_run: false });
    for (const s of [p.a, p.b]) {
      expect(await exists(s.id)).toBe(false);
      expect((await t.api('GET', `/v1/submissions/${s.id}`, key)).status).toBe(404);
    }
    expect(await exists(p.bystander.id)).toBe(true);
    expect(await exists(p.theirs.id)).toBe(true);
    expect(await fileExists(p.file.storageKey)).toBe(false);
    expect(
      await t.deps.database.db.select().from(attachments).where(eq(attachments.submissionId, p.a.id)),
    ).toHaveLength(0);

    const rows = await t.deps.database.db
      .select()
      .from(deliveries)
      .where(inArray(deliveries.id, [p.sent.id, p.pending.id]));
    expect(rows).toHaveLength(2);
    const byId = Object.fromEntries(rows.map((d) => [d.id, d]));
    expect(byId[p.sent.id]).toMatchObject({ status: 'sent', payload: { erased: true }, lastResponse: null });
    expect(byId[p.pending.id]).toMatchObject({ status: 'skipped', skipReason: 'erased', nextAttemptAt: null });
    expect(JSON.stringify(rows).toLowerCase()).not.toContain(addr.toLowerCase());
    const [digest] = await t.deps.database.db.select().from(deliveries).where(eq(deliveries.id, p.digest.id));
    expect(digest.payload).toEqual({
      type: 'digest.ready',
      count: 2,
      submissions: [{ id: p.b.id, erased: true }, p.item(p.bystander)],
    });
    expect(digest).toMatchObject({ lastResponse: null, lastError: null });
    const d = await t.api('GET', `/v1/deliveries/${p.pending.id}`, key);
    expect(d.status).toBe(200);
    expect(d.json).toMatchObject({ status: 'skipped', skip_reason: 'erased' });

    const logged = await t.deps.database.db
      .select()
      .from(events)
      .where(and(eq(events.orgId, orgId), eq(events.type, 'submissions.erased')));
    const mine = logged.filter((e) => (e.data as { email_sha256: string }).email_sha256 === sha256(addr.toLowerCase()));
    expect(mine).toHaveLength(1);
    expect(mine[0].data).toMatchObject({ matched: 2, deleted: 2, files_deleted: 1 });
    expect(JSON.stringify(logged).toLowerCase()).not.toContain(addr.toLowerCase());
    const listed = await t.api('GET', '/v1/events?type=submissions.erased', key);
    expect(listed.status).toBe(200);

    // The event log and system-webhook deliveries keep their rows, without the address; the
    // bystander's longer address beside it stays.
    const [dead] = await t.deps.database.db.select().from(events).where(eq(events.id, p.traces.dead.id));
    const [failing] = await t.deps.database.db.select().from(events).where(eq(events.id, p.traces.failing.id));
    const [hook] = await t.deps.database.db
      .select()
      .from(systemWebhookDeliveries)
      .where(eq(systemWebhookDeliveries.id, p.traces.hook.id));
    expect(dead.data.error).toBe(`HTTP 422: [erased] is not on the list; ${p.traces.bystander} is`);
    expect(failing.data.last_error).toBe('answered 500: unknown user <[erased]>');
    expect(hook).toMatchObject({ lastResponse: { status: 400, body: 'no such contact [erased]' } });
    expect(hook.lastError).toBe('HTTP 400: no such contact [erased]');
    expect((hook.payload as { data: { error: string } }).data.error).toContain('[erased] is not on the list');
    const everything = JSON.stringify({
      events: await t.deps.database.db.select().from(events).where(eq(events.orgId, orgId)),
      hooks: await t.deps.database.db
        .select()
        .from(systemWebhookDeliveries)
        .where(eq(systemWebhookDeliveries.orgId, orgId)),
      deliveries: await t.deps.database.db.select().from(deliveries).where(eq(deliveries.orgId, orgId)),
      submissions: await t.deps.database.db.select().from(submissions).where(eq(submissions.orgId, orgId)),
    })
      .toLowerCase()
      .replaceAll(`other.${addr.toLowerCase()}`, '');
    expect(everything).not.toContain(addr.toLowerCase());
    const read = await t.api('GET', '/v1/events?type=delivery.dead', key);
    expect(JSON.stringify(read.json).toLowerCase().replaceAll(`other.${addr.toLowerCase()}`, '')).not.toContain(
      addr.toLowerCase(),
    );

    // Nothing is left to find: a second request matches nothing.
    expect((await erase({ email: addr })).json).toMatchObject({ matched: 0, deleted: 0 });
  });

  it('form_id limits the erasure to one form; another organization’s form is 404', async () => {
    const addr = address();
    const p = await people(addr);
    const r = await erase({ email: addr, form_id: p.f2 });
    expect(r.json).toMatchObject({ matched: 1, deleted: 1, files_deleted: 0 });
    expect(await exists(p.b.id)).toBe(false);
    expect(await exists(p.a.id)).toBe(true);
    const theirs = await erase({ email: addr, form_id: p.otherForm });
    expect(theirs.status).toBe(404);
    expect(theirs.json.error.code).toBe('not_found');
    expect(await exists(p.theirs.id)).toBe(true);
  });

  it('is idempotent by Idempotency-Key: a replay answers the same without erasing again', async () => {
    const addr = address();
    await people(addr);
    const idem = crypto.randomUUID();
    const first = await erase({ email: addr }, key, { 'idempotency-key': idem });
    expect(first.json).toMatchObject({ matched: 2, deleted: 2 });
    const again = await erase({ email: addr }, key, { 'idempotency-key': idem });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
  });

  it('refuses what is not an address (422), a read key (403) and no key (401)', async () => {
    for (const body of [{ email: 'not-an-address' }, {}, { email: '' }, { email: 'a@b.c', extra: 1 }]) {
      const r = await erase(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
    const ro = await erase({ email: 'ro@example.com', dry_run: true }, readKey);
    expect(ro.status).toBe(403);
    expect(ro.json.error.code).toBe('forbidden');
    expect((await erase({ email: 'ro@example.com' }, null as unknown as string)).status).toBe(401);
  });
});

function sha256(s: string) {
  return crypto.createHash('sha256').update(s).digest('hex');
}
