import { describe, expect, it } from 'vitest';
import { appendEvent } from '../../server/events.js';
import { createForm, orgIdOf } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, submitKey, otherKey } = await tenantApp({ submit: true });

async function submit(formId: string, data: Record<string, unknown> = { email: 'ada@example.com' }) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

/** Events at chosen instants, appended the way the service appends them (oldest first, so ids sort the same). */
async function seedEvents(orgId: string, at: string[], type = 'form.schema.changed') {
  const ids: string[] = [];
  for (const iso of at) {
    const { id } = await t.deps.database.db.transaction((tx) =>
      appendEvent(tx, { orgId, type, subject: { form_id: 'fm_x' }, data: { at: iso }, now: new Date(iso) }),
    );
    ids.push(id);
  }
  return ids;
}

const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((e) => e.id);

describe('GET /v1/events', () => {
  it('shows submission.received with the submission and form ids after a submission', async () => {
    const formId = await createForm(t, key);
    const submissionId = await submit(formId);
    const r = await t.api('GET', '/v1/events', key);
    expect(r.status).toBe(200);
    const ev = r.json.data.find(
      (e: { type: string; subject: { submission_id?: string } }) =>
        e.type === 'submission.received' && e.subject.submission_id === submissionId,
    );
    expect(ev).toMatchObject({
      type: 'submission.received',
      subject: { submission_id: submissionId, form_id: formId },
      data: { status: 'received' },
    });
    expect(ev.id).toMatch(/^ev_/);
    expect(ev.created_at).toMatch(/Z$/);
    expect(Object.keys(ev).sort()).toEqual(['created_at', 'data', 'id', 'subject', 'type']);
    expect(r.json).toHaveProperty('next_cursor');
    // read scope is enough
    expect(ids(await t.api('GET', '/v1/events', readKey))).toContain(ev.id);
  });

  it('lists newest first and filters by one type or several, comma-separated', async () => {
    const k = (await t.onboard()).key;
    const formId = await createForm(t, k);
    const submissionId = await submit(formId);
    const patched = await t.api('PATCH', `/v1/submissions/${submissionId}`, k, { json: { status: 'spam' } });
    expect(patched.status).toBe(200);

    const all = await t.api('GET', '/v1/events', k);
    expect(all.json.data.map((e: { type: string }) => e.type)).toEqual(['submission.updated', 'submission.received']);

    const updated = await t.api('GET', '/v1/events?type=submission.updated', k);
    expect(updated.status).toBe(200);
    expect(updated.json.data).toHaveLength(1);
    expect(updated.json.data[0]).toMatchObject({
      type: 'submission.updated',
      subject: { submission_id: submissionId, form_id: formId },
      data: { from: 'received', to: 'spam' },
    });

    const both = await t.api('GET', '/v1/events?type=submission.received,submission.updated', k);
    expect(ids(both)).toEqual(ids(all));
    const none = await t.api('GET', '/v1/events?type=delivery.dead', k);
    expect(none.json).toEqual({ data: [], next_cursor: null });
  });

  it('answers 422 with a hint for an unknown type', async () => {
    for (const type of ['bogus', 'submission.received,nope']) {
      const r = await t.api('GET', `/v1/events?type=${type}`, key);
      expect(r.status, type).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.hint).toBeTruthy();
      expect(r.json.error.details.issues[0]).toMatchObject({ path: 'type', message: expect.stringMatching(/known/) });
    }
  });

  it('filters by since (inclusive) and until (exclusive)', async () => {
    const k = (await t.onboard()).key;
    const orgId = await orgIdOf(t, k);
    const [jan1, jan2, jan3] = await seedEvents(orgId, [
      '2026-01-01T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
      '2026-01-03T00:00:00.000Z',
    ]);
    const q = async (query: string) => {
      const r = await t.api('GET', `/v1/events?${query}`, k);
      expect(r.status, query).toBe(200);
      return ids(r);
    };
    expect(await q('since=2026-01-02T00:00:00Z')).toEqual([jan3, jan2]);
    expect(await q('since=2026-01-02T00:00:00.001Z')).toEqual([jan3]);
    expect(await q('until=2026-01-02T00:00:00Z')).toEqual([jan1]);
    expect(await q('since=2026-01-01T00:00:00Z&until=2026-01-03T00:00:00Z')).toEqual([jan2, jan1]);
    expect(await q(`since=${encodeURIComponent('2026-01-02T01:00:00+02:00')}`)).toEqual([jan3, jan2]);
    expect(await q('since=2026-02-01T00:00:00Z')).toEqual([]);
  });

  it('answers 422 for a malformed since or until, or since after until', async () => {
    for (const query of [
      'since=yesterday',
      'since=2026-13-01T00:00:00Z',
      'until=12345',
      'since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z',
    ]) {
      const r = await t.api('GET', `/v1/events?${query}`, key);
      expect(r.status, query).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.hint).toBeTruthy();
      expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(query.slice(0, 5));
    }
  });

  it('pages with next_cursor, without overlap, and rejects a foreign cursor', async () => {
    const k = (await t.onboard()).key;
    const orgId = await orgIdOf(t, k);
    const seeded = await seedEvents(orgId, [
      '2026-03-01T00:00:00.000Z',
      '2026-03-02T00:00:00.000Z',
      '2026-03-03T00:00:00.000Z',
      '2026-03-04T00:00:00.000Z',
      '2026-03-05T00:00:00.000Z',
    ]);
    const first = await t.api('GET', '/v1/events?limit=2', k);
    expect(ids(first)).toEqual([seeded[4], seeded[3]]);
    expect(first.json.next_cursor).toBe(seeded[3]);
    const second = await t.api('GET', `/v1/events?limit=2&cursor=${first.json.next_cursor}`, k);
    expect(ids(second)).toEqual([seeded[2], seeded[1]]);
    const third = await t.api('GET', `/v1/events?limit=2&cursor=${second.json.next_cursor}`, k);
    expect(ids(third)).toEqual([seeded[0]]);
    expect(third.json.next_cursor).toBeNull();
    const filtered = await t.api('GET', `/v1/events?limit=1&since=2026-03-04T00:00:00Z&cursor=${seeded[4]}`, k);
    expect(ids(filtered)).toEqual([seeded[3]]);
    expect(filtered.json.next_cursor).toBeNull();

    const bad = await t.api('GET', '/v1/events?cursor=sb_nope', k);
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.issues[0].path).toBe('cursor');
    expect((await t.api('GET', '/v1/events?limit=201', k)).status).toBe(422);
  });

  it("never shows another organization's events", async () => {
    const a = (await t.onboard()).key;
    const b = (await t.onboard()).key;
    const mine = await submit(await createForm(t, a));
    const theirs = await submit(await createForm(t, b));
    const subjects = async (k: string) =>
      (await t.api('GET', '/v1/events', k)).json.data.map(
        (e: { subject: { submission_id: string } }) => e.subject.submission_id,
      );
    expect(await subjects(a)).toEqual([mine]);
    expect(await subjects(b)).toEqual([theirs]);
    expect(await subjects(otherKey)).toEqual([]);
  });

  it('needs a key with read scope', async () => {
    const anon = await t.api('GET', '/v1/events', null);
    expect(anon.status).toBe(401);
    expect(anon.json.error.code).toBe('unauthorized');
    const submitOnly = await t.api('GET', '/v1/events', submitKey);
    expect(submitOnly.status).toBe(403);
    expect(submitOnly.json.error.code).toBe('forbidden');
  });
});
