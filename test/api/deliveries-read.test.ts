import { describe, expect, it } from 'vitest';
import { newId } from '../../shared/ids.js';
import { createForm, seedDelivery, seedSubmission } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, orgId, readKey, submitKey, otherKey } = await tenantApp({ submit: true });

const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((d) => d.id);

describe('GET /v1/deliveries/{id}', () => {
  it('presents a delivery with its last response as a DeliveryResult', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    const routeId = newId('route');
    const destinationId = newId('destination');
    const next = new Date('2030-01-01T00:00:00Z');
    const d = await seedDelivery(t, {
      orgId,
      submissionId: s.id,
      formId,
      routeId,
      destinationId,
      status: 'failed',
      attempts: 2,
      nextAttemptAt: next,
      schemaVersion: 3,
      payload: { id: 'x', data: { email: 'a@example.com' } },
      lastResponse: { ok: false, status_code: 500, latency_ms: 12.5, response_excerpt: 'oops', error: 'HTTP 500' },
      lastError: 'HTTP 500',
    });
    const r = await t.api('GET', `/v1/deliveries/${d.id}`, key);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      id: d.id,
      submission_id: s.id,
      route_id: routeId,
      destination_id: destinationId,
      status: 'failed',
      skip_reason: null,
      attempts: 2,
      next_attempt_at: next.toISOString(),
      schema_version: 3,
      payload: { id: 'x', data: { email: 'a@example.com' } },
      last_response: { ok: false, status_code: 500, latency_ms: 12.5, response_excerpt: 'oops', error: 'HTTP 500' },
      last_error: 'HTTP 500',
      created_at: d.createdAt.toISOString(),
      sent_at: null,
    });
  });

  it('normalizes partial results, keeps null before the first attempt, and never shows a bot token', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId });
    const fresh = await seedDelivery(t, { orgId, submissionId: s.id, formId });
    expect((await t.api('GET', `/v1/deliveries/${fresh.id}`, key)).json).toMatchObject({
      status: 'pending',
      attempts: 0,
      last_response: null,
      last_error: null,
      sent_at: null,
    });
    const leaky = await seedDelivery(t, {
      orgId,
      submissionId: s.id,
      formId,
      status: 'dead',
      lastResponse: {
        ok: false,
        error: 'fetch https://api.telegram.org/bot123456:AAE-secret_Token/sendMessage failed',
      },
      lastError: 'POST https://api.telegram.org/bot123456:AAE-secret_Token/sendMessage: ECONNRESET',
    });
    const r = await t.api('GET', `/v1/deliveries/${leaky.id}`, key);
    expect(r.json.last_response).toEqual({
      ok: false,
      status_code: null,
      latency_ms: 0,
      response_excerpt: '',
      error: 'fetch https://api.telegram.org/bot[redacted]/sendMessage failed',
    });
    expect(r.text).not.toContain('secret_Token');
    const sent = new Date();
    const ok = await seedDelivery(t, { orgId, submissionId: s.id, status: 'sent', attempts: 1, sentAt: sent });
    expect((await t.api('GET', `/v1/deliveries/${ok.id}`, key)).json).toMatchObject({ sent_at: sent.toISOString() });
  });

  it('shows a digest delivery (no submission) with submission_id null', async () => {
    const d = await seedDelivery(t, { orgId, submissionId: null, status: 'pending' });
    const r = await t.api('GET', `/v1/deliveries/${d.id}`, key);
    expect(r.status).toBe(200);
    expect(r.json.submission_id).toBeNull();
  });

  it('is 404 for another organization and unknown ids; 401 and 403 without the read scope', async () => {
    const d = await seedDelivery(t, { orgId, submissionId: null });
    const other = await t.api('GET', `/v1/deliveries/${d.id}`, otherKey);
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe('not_found');
    expect(other.json.error.hint).toMatch(/GET \/v1\/deliveries/);
    expect((await t.api('GET', '/v1/deliveries/dl_unknown', key)).status).toBe(404);
    expect((await t.api('GET', `/v1/deliveries/${d.id}`, null)).status).toBe(401);
    const sub = await t.api('GET', `/v1/deliveries/${d.id}`, submitKey);
    expect(sub.status).toBe(403);
    expect(sub.json.error.code).toBe('forbidden');
    expect((await t.api('GET', `/v1/deliveries/${d.id}`, readKey)).status).toBe(200);
  });
});

describe('GET /v1/deliveries', () => {
  it('lists newest first and filters by status, form_id, route_id, destination_id and submission_id', async () => {
    const f1 = await createForm(t, key);
    const f2 = await createForm(t, key);
    const s1 = await seedSubmission(t, { orgId, formId: f1 });
    const s2 = await seedSubmission(t, { orgId, formId: f2 });
    const r1 = newId('route');
    const r2 = newId('route');
    const ds1 = newId('destination');
    const ds2 = newId('destination');
    const a = await seedDelivery(t, { orgId, submissionId: s1.id, formId: f1, routeId: r1, destinationId: ds1 });
    const b = await seedDelivery(t, {
      orgId,
      submissionId: s1.id,
      formId: f1,
      routeId: r2,
      destinationId: ds2,
      status: 'sent',
    });
    const c = await seedDelivery(t, {
      orgId,
      submissionId: s2.id,
      formId: f2,
      routeId: r1,
      destinationId: ds1,
      status: 'dead',
    });
    const list = async (q: string) => {
      const r = await t.api('GET', `/v1/deliveries?${q}`, key);
      expect(r.status, q).toBe(200);
      return ids(r);
    };
    expect(await list(`form_id=${f1}`)).toEqual([b.id, a.id]);
    expect(await list(`form_id=${f2}`)).toEqual([c.id]);
    expect(await list(`route_id=${r1}`)).toEqual([c.id, a.id]);
    expect(await list(`destination_id=${ds2}`)).toEqual([b.id]);
    expect(await list(`submission_id=${s1.id}`)).toEqual([b.id, a.id]);
    expect(await list(`submission_id=${s1.id}&status=sent`)).toEqual([b.id]);
    expect(await list(`route_id=${r1}&status=dead`)).toEqual([c.id]);
    expect(await list(`route_id=${r1}&status=skipped`)).toEqual([]);
    const all = await list('limit=200');
    expect(all.slice(0, 3)).toEqual([c.id, b.id, a.id]);
    const dead = await t.api('GET', '/v1/deliveries?status=dead&limit=200', key);
    expect(dead.json.data.every((d: { status: string }) => d.status === 'dead')).toBe(true);
  });

  it('paginates with stable cursors', async () => {
    const routeId = newId('route');
    const made: string[] = [];
    for (let i = 0; i < 5; i += 1) made.push((await seedDelivery(t, { orgId, submissionId: null, routeId })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await t.api(
        'GET',
        `/v1/deliveries?route_id=${routeId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        key,
      );
      expect(r.status).toBe(200);
      expect(r.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(r));
      cursor = r.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
  });

  it('answers 422 on bad filters and cursors', async () => {
    for (const q of ['status=lost', 'limit=0', 'limit=201', 'cursor=nonsense', `cursor=${newId('submission')}`]) {
      const r = await t.api('GET', `/v1/deliveries?${q}`, key);
      expect(r.status, q).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });

  it('keeps tenants apart and enforces scopes', async () => {
    const d = await seedDelivery(t, { orgId, submissionId: null });
    const theirs = await t.api('GET', '/v1/deliveries?limit=200', otherKey);
    expect(theirs.status).toBe(200);
    expect(theirs.text).not.toContain(d.id);
    expect(ids(await t.api('GET', `/v1/deliveries?route_id=${d.routeId}`, otherKey))).toEqual([]);
    expect((await t.api('GET', '/v1/deliveries', null)).status).toBe(401);
    expect((await t.api('GET', '/v1/deliveries', submitKey)).status).toBe(403);
    expect((await t.api('GET', '/v1/deliveries', readKey)).status).toBe(200);
  });
});
