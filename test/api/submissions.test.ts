import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { events } from '../../server/db/schema.js';
import { createForm, seedAttachment, seedDelivery, seedSubmission } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, orgId, readKey, submitKey, otherKey, otherOrgId } = await tenantApp({ submit: true });

const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((s) => s.id);

describe('GET /v1/submissions and /v1/forms/{id}/submissions', () => {
  it('lists newest first with the Submission shape; tests are included by default', async () => {
    const formId = await createForm(t, key);
    const s1 = await seedSubmission(t, { orgId, formId, data: { n: 1 } });
    const s2 = await seedSubmission(t, { orgId, formId, test: true, data: { n: 2 } });
    const s3 = await seedSubmission(t, {
      orgId,
      formId,
      status: 'quarantined',
      quarantineReason: 'origin_rejected',
      data: { n: 3 },
    });
    const r = await t.api('GET', `/v1/forms/${formId}/submissions`, key);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([s3.id, s2.id, s1.id]);
    expect(r.json.next_cursor).toBeNull();
    expect(r.json.data[0]).toEqual({
      id: s3.id,
      form_id: formId,
      status: 'quarantined',
      quarantine_reason: 'origin_rejected',
      test: false,
      data: { n: 3 },
      form_schema_version: null,
      spam: { score: 0, reasons: [] },
      meta: expect.objectContaining({ ip: '203.0.113.7', content_type: 'application/json' }),
      received_at: s3.receivedAt.toISOString(),
      attachments: [],
      duplicate_of: null,
    });
    expect(r.json.data[1]).toMatchObject({ test: true, quarantine_reason: null });
    const all = await t.api('GET', '/v1/submissions?limit=200', key);
    expect(ids(all)).toEqual(expect.arrayContaining([s1.id, s2.id, s3.id]));
  });

  it('list items carry a summary of their files (no link); a submission without files has none', async () => {
    const formId = await createForm(t, key);
    const body = new FormData();
    body.set('name', 'with file');
    body.set('doc', new Blob(['list me'], { type: 'text/plain' }), 'hello.txt');
    const withFile = await t.request('POST', `/s/${formId}`, { body, headers: { accept: 'application/json' } });
    const multipartOnly = new FormData();
    multipartOnly.set('name', 'multipart, no file');
    const noFile = await t.request('POST', `/s/${formId}`, {
      body: multipartOnly,
      headers: { accept: 'application/json' },
    });
    const plain = await seedSubmission(t, { orgId, formId, data: { name: 'json' } });
    const file = (await t.api('GET', `/v1/submissions/${withFile.json.submission_id}`, key)).json.attachments[0];
    for (const path of [`/v1/forms/${formId}/submissions`, `/v1/submissions?form_id=${formId}`]) {
      const r = await t.api('GET', path, readKey);
      const byId = new Map(r.json.data.map((s: { id: string }) => [s.id, s]));
      expect((byId.get(withFile.json.submission_id) as any).attachments).toEqual([
        {
          id: file.id,
          field_name: 'doc',
          filename: 'hello.txt',
          content_type: file.content_type,
          size_bytes: 7,
          sha256: file.sha256,
        },
      ]);
      expect((byId.get(noFile.json.submission_id) as any).attachments).toEqual([]);
      expect((byId.get(plain.id) as any).attachments).toEqual([]);
    }
  });

  it('filters by form_id, status and test', async () => {
    const f1 = await createForm(t, key);
    const f2 = await createForm(t, key);
    const a = await seedSubmission(t, { orgId, formId: f1 });
    const b = await seedSubmission(t, { orgId, formId: f1, status: 'spam' });
    const c = await seedSubmission(t, { orgId, formId: f1, test: true });
    const d = await seedSubmission(t, { orgId, formId: f2, status: 'quarantined' });
    expect(ids(await t.api('GET', `/v1/submissions?form_id=${f1}`, key))).toEqual([c.id, b.id, a.id]);
    expect(ids(await t.api('GET', `/v1/submissions?form_id=${f2}`, key))).toEqual([d.id]);
    expect(ids(await t.api('GET', `/v1/submissions?form_id=${f1}&status=spam`, key))).toEqual([b.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f1}/submissions?status=received`, key))).toEqual([c.id, a.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f1}/submissions?test=true`, key))).toEqual([c.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f1}/submissions?test=false`, key))).toEqual([b.id, a.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f2}/submissions?status=quarantined`, key))).toEqual([d.id]);
    const q = await t.api('GET', '/v1/submissions?status=quarantined&limit=200', key);
    expect(ids(q)).toContain(d.id);
    expect(q.json.data.every((s: { status: string }) => s.status === 'quarantined')).toBe(true);
    // An unknown (or another organization's) form id as a filter is simply an empty list.
    expect(ids(await t.api('GET', '/v1/submissions?form_id=fm_nothing', key))).toEqual([]);
  });

  it('filters on received_at: since inclusive, until exclusive, dates and offsets accepted', async () => {
    const formId = await createForm(t, key);
    const jan = await seedSubmission(t, { orgId, formId, receivedAt: new Date('2025-01-01T00:00:00Z') });
    const feb = await seedSubmission(t, { orgId, formId, receivedAt: new Date('2025-02-01T00:00:00Z') });
    const mar = await seedSubmission(t, { orgId, formId, receivedAt: new Date('2025-03-01T00:00:00Z') });
    const list = async (q: string) => ids(await t.api('GET', `/v1/forms/${formId}/submissions?${q}`, key));
    expect(await list('since=2025-02-01T00:00:00Z')).toEqual([mar.id, feb.id]);
    expect(await list('until=2025-02-01T00:00:00.000Z')).toEqual([jan.id]);
    expect(await list('since=2025-01-15T00:00:00Z&until=2025-02-15T00:00:00Z')).toEqual([feb.id]);
    expect(await list('since=2025-02-01')).toEqual([mar.id, feb.id]);
    expect(await list(`since=${encodeURIComponent('2025-02-01T01:00:00+01:00')}`)).toEqual([mar.id, feb.id]);
    expect(ids(await t.api('GET', `/v1/submissions?form_id=${formId}&until=2025-03-01`, key))).toEqual([
      feb.id,
      jan.id,
    ]);
  });

  it('paginates with stable cursors', async () => {
    const formId = await createForm(t, key);
    const made: string[] = [];
    for (let i = 0; i < 5; i += 1) made.push((await seedSubmission(t, { orgId, formId, data: { i } })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await t.api(
        'GET',
        `/v1/forms/${formId}/submissions?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        key,
      );
      expect(r.status).toBe(200);
      expect(r.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(r));
      cursor = r.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
    const p = await t.api('GET', `/v1/submissions?form_id=${formId}&limit=3`, key);
    expect(ids(p)).toEqual(seen.slice(0, 3));
    const p2 = await t.api('GET', `/v1/submissions?form_id=${formId}&limit=3&cursor=${p.json.next_cursor}`, key);
    expect(ids(p2)).toEqual(seen.slice(3));
    expect(p2.json.next_cursor).toBeNull();
  });

  it('answers 422 validation_failed on bad filters', async () => {
    const formId = await createForm(t, key);
    for (const q of [
      'since=yesterday',
      'until=2025-13-01',
      'since=2025-02-01T00:00:00',
      'status=deleted',
      'test=yes',
      'limit=201',
      'cursor=nonsense',
      `cursor=${formId}`,
    ]) {
      for (const path of ['/v1/submissions', `/v1/forms/${formId}/submissions`]) {
        const r = await t.api('GET', `${path}?${q}`, key);
        expect(r.status, `${path}?${q}`).toBe(422);
        expect(r.json.error.code).toBe('validation_failed');
      }
    }
    const r = await t.api('GET', '/v1/submissions?since=yesterday', key);
    expect(r.json.error.details.issues[0].path).toBe('since');
  });

  it('keeps tenants apart and enforces scopes on the lists', async () => {
    const formId = await createForm(t, key);
    const mine = await seedSubmission(t, { orgId, formId });
    expect((await t.api('GET', `/v1/forms/${formId}/submissions`, otherKey)).status).toBe(404);
    const theirs = await t.api('GET', '/v1/submissions?limit=200', otherKey);
    expect(theirs.status).toBe(200);
    expect(theirs.text).not.toContain(mine.id);
    expect(ids(await t.api('GET', `/v1/submissions?form_id=${formId}`, otherKey))).toEqual([]);
    expect((await t.api('GET', '/v1/forms/fm_unknown/submissions', key)).status).toBe(404);
    for (const path of ['/v1/submissions', `/v1/forms/${formId}/submissions`]) {
      expect((await t.api('GET', path, null)).status).toBe(401);
      const sub = await t.api('GET', path, submitKey);
      expect(sub.status).toBe(403);
      expect(sub.json.error.code).toBe('forbidden');
      expect((await t.api('GET', path, readKey)).status).toBe(200);
    }
  });
});

describe('GET /v1/submissions/{id}', () => {
  it('answers SubmissionDetail: attachments with download_url, deliveries oldest first, drift, issues', async () => {
    const formId = await createForm(t, key);
    const issues = [{ path: 'email', message: 'must be an email' }];
    const s = await seedSubmission(t, { orgId, formId, issues, formSchemaVersion: 2, data: { cv: 'x' } });
    const file = await seedAttachment(t, { orgId, formId, submissionId: s.id, fieldName: 'cv', bytes: 'hello' });
    const d1 = await seedDelivery(t, { orgId, submissionId: s.id, formId, status: 'sent', attempts: 1 });
    const d2 = await seedDelivery(t, { orgId, submissionId: s.id, formId, status: 'skipped', skipReason: 'window' });
    await seedDelivery(t, { orgId, submissionId: (await seedSubmission(t, { orgId, formId })).id, formId });
    const r = await t.api('GET', `/v1/submissions/${s.id}`, key);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: s.id, form_id: formId, status: 'received', form_schema_version: 2 });
    expect(r.json.issues).toEqual(issues);
    expect(r.json.drift).toEqual([]);
    expect(r.json.attachments).toEqual([
      {
        id: file.id,
        form_id: formId,
        submission_id: s.id,
        field_name: 'cv',
        filename: 'cv.pdf',
        content_type: 'application/pdf',
        size_bytes: 5,
        sha256: crypto.createHash('sha256').update('hello').digest('hex'),
        download_url: `http://127.0.0.1:8787/v1/submissions/${s.id}/attachments/${file.id}`,
        created_at: file.createdAt.toISOString(),
      },
    ]);
    expect(r.json.deliveries.map((d: { id: string }) => d.id)).toEqual([d1.id, d2.id]);
    expect(r.json.deliveries[1]).toMatchObject({ status: 'skipped', skip_reason: 'window', submission_id: s.id });
    const bare = await t.api('GET', `/v1/submissions/${(await seedSubmission(t, { orgId, formId })).id}`, key);
    expect(bare.json).toMatchObject({ attachments: [], deliveries: [], drift: [], issues: null });
  });

  it('is 404 for another organization and unknown ids, 401/403 without the read scope', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    const other = await t.api('GET', `/v1/submissions/${s.id}`, otherKey);
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('not_found');
    expect((await t.api('GET', '/v1/submissions/sb_unknown', key)).status).toBe(404);
    expect((await t.api('GET', `/v1/submissions/${s.id}`, null)).status).toBe(401);
    expect((await t.api('GET', `/v1/submissions/${s.id}`, submitKey)).status).toBe(403);
    expect((await t.api('GET', `/v1/submissions/${s.id}`, readKey)).status).toBe(200);
  });
});

describe('PATCH /v1/submissions/{id}', () => {
  const eventsOf = (submissionId: string) =>
    t.deps.database.db
      .select()
      .from(events)
      .where(and(eq(events.orgId, orgId), eq(events.type, 'submission.updated')))
      .then((rows) =>
        rows.filter((e) => e.subject.submission_id === submissionId).sort((a, b) => (a.id < b.id ? -1 : 1)),
      );

  it('marks as spam and back, releases quarantine, records submission.updated each time', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId, status: 'quarantined', quarantineReason: 'rate_limited' });
    await seedDelivery(t, { orgId, submissionId: s.id, formId, status: 'skipped', skipReason: 'quality' });

    const released = await t.api('PATCH', `/v1/submissions/${s.id}`, key, { json: { status: 'received' } });
    expect(released.status).toBe(200);
    expect(released.json).toMatchObject({ id: s.id, status: 'received', quarantine_reason: null, data: s.data });
    expect(released.json.deliveries).toHaveLength(1); // no delivery planned
    expect(released.json).toHaveProperty('attachments');

    const spam = await t.api('PATCH', `/v1/submissions/${s.id}`, key, { json: { status: 'spam' } });
    expect(spam.json).toMatchObject({ status: 'spam', quarantine_reason: null });
    const back = await t.api('PATCH', `/v1/submissions/${s.id}`, key, { json: { status: 'received' } });
    expect(back.json.status).toBe('received');
    expect((await t.api('GET', `/v1/submissions/${s.id}`, key)).json).toMatchObject({
      status: 'received',
      data: s.data,
      deliveries: [expect.objectContaining({ status: 'skipped' })],
    });

    const evs = await eventsOf(s.id);
    expect(evs.map((e) => e.data)).toEqual([
      { from: 'quarantined', to: 'received' },
      { from: 'received', to: 'spam' },
      { from: 'spam', to: 'received' },
    ]);
    expect(evs[0].subject).toEqual({ submission_id: s.id, form_id: formId });
    expect(evs[0].id).toMatch(/^ev_/);
    expect(t.wakes).toBe(0);
  });

  it('is a no-op without an event when the status is already the one asked for', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId, status: 'spam' });
    const r = await t.api('PATCH', `/v1/submissions/${s.id}`, key, { json: { status: 'spam' } });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('spam');
    expect(await eventsOf(s.id)).toEqual([]);
  });

  it('answers 422 on a bad body, 404 for another organization, 403 for a read key', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    for (const json of [{}, { status: 'quarantined' }, { status: 'spam', data: { x: 1 } }, { status: 1 }]) {
      const r = await t.api('PATCH', `/v1/submissions/${s.id}`, key, { json });
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.details.issues.length).toBeGreaterThan(0);
    }
    const other = await t.api('PATCH', `/v1/submissions/${s.id}`, otherKey, { json: { status: 'spam' } });
    expect(other.status).toBe(404);
    expect((await t.api('PATCH', '/v1/submissions/sb_nope', key, { json: { status: 'spam' } })).status).toBe(404);
    expect((await t.api('PATCH', `/v1/submissions/${s.id}`, readKey, { json: { status: 'spam' } })).status).toBe(403);
    expect((await t.api('PATCH', `/v1/submissions/${s.id}`, null, { json: { status: 'spam' } })).status).toBe(401);
    expect((await t.api('GET', `/v1/submissions/${s.id}`, key)).json.status).toBe('received');
    expect(await eventsOf(s.id)).toEqual([]);
  });
});

describe('GET /v1/submissions/{id}/attachments/{fileId}', () => {
  it('streams the exact bytes with type, length, download disposition and nosniff', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    const bytes = crypto.randomBytes(300_000);
    const file = await seedAttachment(t, { orgId, formId, submissionId: s.id, bytes, filename: 'report.pdf' });
    const res = await t.app.request(`/v1/submissions/${s.id}/attachments/${file.id}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    // The advertised download_url is this very path.
    const detail = await t.api('GET', `/v1/submissions/${s.id}`, key);
    expect(new URL(detail.json.attachments[0].download_url).pathname).toBe(
      `/v1/submissions/${s.id}/attachments/${file.id}`,
    );
  });

  it('sanitizes the filename and refuses a malformed stored content type', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    const file = await seedAttachment(t, {
      orgId,
      formId,
      submissionId: s.id,
      filename: 'a"b\\c résumé 😀;.html',
      contentType: 'text/html\r\nX-Evil: 1',
    });
    const r = await t.api('GET', `/v1/submissions/${s.id}/attachments/${file.id}`, key);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    const cd = r.headers.get('content-disposition') as string;
    expect(cd).toMatch(/^attachment; filename="a_b_c r_sum_ __.html"; filename\*=UTF-8''/);
    const encoded = /filename\*=UTF-8''(.+)$/.exec(cd)?.[1] as string;
    expect(decodeURIComponent(encoded)).toBe('a"b\\c résumé 😀;.html');
    expect(r.headers.get('x-evil')).toBeNull();
    const empty = await seedAttachment(t, { orgId, formId, submissionId: s.id, bytes: '', contentType: 'text/plain' });
    const e = await t.api('GET', `/v1/submissions/${s.id}/attachments/${empty.id}`, key);
    expect(e.status).toBe(200);
    expect(e.text).toBe('');
    expect(e.headers.get('content-type')).toBe('text/plain');
  });

  it('is 404 for another organization, a file of another submission, unknown ids and lost bytes', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    const s2 = await seedSubmission(t, { orgId, formId });
    const file = await seedAttachment(t, { orgId, formId, submissionId: s.id });
    const path = `/v1/submissions/${s.id}/attachments/${file.id}`;
    expect((await t.api('GET', path, otherKey)).status).toBe(404);
    expect((await t.api('GET', `/v1/submissions/${s2.id}/attachments/${file.id}`, key)).status).toBe(404);
    expect((await t.api('GET', `/v1/submissions/${s.id}/attachments/fl_nope`, key)).status).toBe(404);
    expect((await t.api('GET', path, null)).status).toBe(401);
    expect((await t.api('GET', path, submitKey)).status).toBe(403);

    // Another organization's file under its own submission stays invisible too.
    const theirForm = await createForm(t, otherKey);
    const theirs = await seedSubmission(t, { orgId: otherOrgId, formId: theirForm });
    const theirFile = await seedAttachment(t, { orgId: otherOrgId, formId: theirForm, submissionId: theirs.id });
    expect((await t.api('GET', `/v1/submissions/${theirs.id}/attachments/${theirFile.id}`, key)).status).toBe(404);
    expect((await t.api('GET', `/v1/submissions/${theirs.id}/attachments/${theirFile.id}`, otherKey)).status).toBe(200);

    await t.deps.storage.remove(file.storageKey);
    const lost = await t.api('GET', path, key);
    expect(lost.status).toBe(404);
    expect(lost.json.error).toMatchObject({ code: 'not_found' });
    expect(lost.json.error.message).toMatch(/no longer stored/);
  });
});
