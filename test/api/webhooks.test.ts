import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemWebhookDeliveries, systemWebhooks } from '../../server/db/schema.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { createForm } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp();

const SECRET = 'whsec-super-private-value';
const URL_A = 'https://hooks.example.com/events';

const hook = (extra: Record<string, unknown> = {}) => ({ url: URL_A, events: ['submission.received'], ...extra });

async function create(k: string, body: Record<string, unknown>) {
  const r = await t.api('POST', '/v1/webhooks', k, { json: body });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; [k: string]: unknown };
}

/** The row as stored, secret included (what the worker signs with). */
async function stored(id: string) {
  const [row] = await t.deps.database.db.select().from(systemWebhooks).where(eq(systemWebhooks.id, id));
  return row;
}

async function submit(formId: string) {
  const r = await t.request('POST', `/s/${formId}`, {
    json: { email: 'ada@example.com' },
    headers: { accept: 'application/json' },
  });
  expect(r.status).toBe(200);
  return r.json.submission_id as string;
}

function expect422(r: { status: number; json: any; text: string }, path: string) {
  expect(r.status, r.text).toBe(422);
  expect(r.json.error.code).toBe('validation_failed');
  expect(r.json.error.hint).toBeTruthy();
  expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
}

describe('system webhooks CRUD', () => {
  it('creates, reads, lists, updates and deletes; the secret is stored but never returned', async () => {
    const created = await t.api('POST', '/v1/webhooks', key, {
      json: hook({ events: ['submission.received', 'delivery.dead', 'submission.received'], secret: SECRET }),
    });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: URL_A,
      events: ['submission.received', 'delivery.dead'],
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      health: 'unknown',
      has_secret: true,
      created_at: expect.stringMatching(/Z$/),
    });
    const id = created.json.id;
    expect((await stored(id)).secret).toBe(SECRET);

    const got = await t.api('GET', `/v1/webhooks/${id}`, key);
    expect(got.json).toEqual(created.json);
    const list = await t.api('GET', '/v1/webhooks', key);
    expect(list.json.data.map((w: { id: string }) => w.id)).toContain(id);
    expect(list.json.next_cursor).toBeNull();
    expect((await t.api('GET', '/v1/webhooks', readKey)).json.data).toEqual(list.json.data);

    const patched = await t.api('PATCH', `/v1/webhooks/${id}`, key, {
      json: { events: ['delivery.sent', 'drift.detected', 'submission.updated'], enabled: false },
    });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      id,
      url: URL_A,
      events: ['delivery.sent', 'drift.detected', 'submission.updated'],
      enabled: false,
      has_secret: true,
    });
    for (const r of [created, got, list, patched]) {
      expect(r.text).not.toContain(SECRET);
      expect(r.text).not.toContain('"secret"');
    }

    const rotated = await t.api('PATCH', `/v1/webhooks/${id}`, key, { json: { secret: 'another-secret-1' } });
    expect(rotated.status).toBe(200);
    expect(rotated.json.has_secret).toBe(true);
    expect(rotated.text).not.toContain('another-secret-1');
    expect((await stored(id)).secret).toBe('another-secret-1');

    const cleared = await t.api('PATCH', `/v1/webhooks/${id}`, key, { json: { secret: null } });
    expect(cleared.json.has_secret).toBe(false);
    expect((await stored(id)).secret).toBeNull();

    const empty = await t.api('PATCH', `/v1/webhooks/${id}`, key, { json: {} });
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual(cleared.json);

    expect((await t.api('DELETE', `/v1/webhooks/${id}`, key)).status).toBe(204);
    const gone = await t.api('GET', `/v1/webhooks/${id}`, key);
    expect(gone.status).toBe(404);
    expect(gone.json.error.hint).toBeTruthy();
    expect((await t.api('DELETE', `/v1/webhooks/${id}`, key)).status).toBe(404);
  });

  it('creates disabled and unsigned when asked; has_secret false', async () => {
    const w = await create(key, hook({ enabled: false }));
    expect(w).toMatchObject({ enabled: false, has_secret: false });
    expect((await stored(w.id)).secret).toBeNull();
  });

  it('a new url or re-enabling resets health to unknown', async () => {
    const w = await create(key, hook());
    await t.deps.database.db
      .update(systemWebhooks)
      .set({ health: 'failing', consecutiveFailures: 4 })
      .where(eq(systemWebhooks.id, w.id));
    const same = await t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json: { events: ['delivery.dead'] } });
    expect(same.json.health).toBe('failing');
    const moved = await t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json: { url: 'https://other.example.com/x' } });
    expect(moved.json).toMatchObject({ url: 'https://other.example.com/x', health: 'unknown' });
    expect((await stored(w.id)).consecutiveFailures).toBe(0);

    await t.deps.database.db.update(systemWebhooks).set({ health: 'failing' }).where(eq(systemWebhooks.id, w.id));
    await t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json: { enabled: false } });
    expect((await stored(w.id)).health).toBe('failing');
    const on = await t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json: { enabled: true } });
    expect(on.json).toMatchObject({ enabled: true, health: 'unknown' });
  });

  it('a url on another host drops the stored secret unless given again, and says so', async () => {
    const w = await create(key, hook({ secret: SECRET }));
    const samePlace = await t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json: { url: `${URL_A}/v2` } });
    expect(samePlace.json).toMatchObject({ has_secret: true });
    expect(samePlace.json.warnings).toBeUndefined();
    const moved = await t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json: { url: 'https://other.example.net/x' } });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({ url: 'https://other.example.net/x', has_secret: false });
    expect(moved.json.warnings[0]).toMatch(/secret was dropped/);
    expect((await stored(w.id)).secret).toBeNull();
    const withSecret = await t.api('PATCH', `/v1/webhooks/${w.id}`, key, {
      json: { url: URL_A, secret: 'given-again-1' },
    });
    expect(withSecret.json).toMatchObject({ url: URL_A, has_secret: true });
    expect(withSecret.json.warnings).toBeUndefined();
    expect((await stored(w.id)).secret).toBe('given-again-1');
  });

  it('answers 422 with the field for invalid bodies', async () => {
    const post = (json: unknown) => t.api('POST', '/v1/webhooks', key, { json });
    expect422(await post(hook({ events: ['submission.deleted'] })), 'events.0');
    expect422(await post(hook({ events: [] })), 'events');
    expect422(await post({ url: URL_A }), 'events');
    expect422(await post(hook({ events: Array.from({ length: 21 }, () => 'delivery.sent') })), 'events');
    expect422(await post(hook({ url: 'ftp://hooks.example.com/x' })), 'url');
    expect422(await post(hook({ url: 'not a url' })), 'url');
    expect422(await post(hook({ url: `https://example.com/${'x'.repeat(2000)}` })), 'url');
    expect422(await post({ events: ['submission.received'] }), 'url');
    expect422(await post(hook({ secret: 'short' })), 'secret');
    expect422(await post(hook({ enabled: 'yes' })), 'enabled');
    expect422(await post(hook({ name: 'extra' })), '(body)');

    const w = await create(key, hook());
    const patch = (json: unknown) => t.api('PATCH', `/v1/webhooks/${w.id}`, key, { json });
    expect422(await patch({ events: [] }), 'events');
    expect422(await patch({ events: ['nope'] }), 'events.0');
    expect422(await patch({ url: 'javascript:alert(1)' }), 'url');
    expect422(await patch({ secret: '' }), 'secret');
    expect422(await patch({ health: 'ok' }), '(body)');
    expect((await t.api('GET', `/v1/webhooks/${w.id}`, key)).json).toEqual(w);
  });
});

describe('system webhooks security', () => {
  it('401 without a key on every operation', async () => {
    const w = await create(key, hook());
    for (const [method, path] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'],
      ['GET', `/v1/webhooks/${w.id}`],
      ['PATCH', `/v1/webhooks/${w.id}`],
      ['DELETE', `/v1/webhooks/${w.id}`],
      ['GET', `/v1/webhooks/${w.id}/deliveries`],
    ]) {
      const r = await t.api(method, path, null, method === 'POST' || method === 'PATCH' ? { json: hook() } : {});
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(r.json.error.code).toBe('unauthorized');
    }
  });

  it('a read key reads but gets 403 on create, update and delete', async () => {
    const w = await create(key, hook());
    const post = await t.api('POST', '/v1/webhooks', readKey, { json: hook() });
    expect(post.status).toBe(403);
    expect(post.json.error.code).toBe('forbidden');
    expect((await t.api('PATCH', `/v1/webhooks/${w.id}`, readKey, { json: { enabled: false } })).status).toBe(403);
    expect((await t.api('DELETE', `/v1/webhooks/${w.id}`, readKey)).status).toBe(403);
    expect((await t.api('GET', `/v1/webhooks/${w.id}`, readKey)).status).toBe(200);
    expect((await t.api('GET', `/v1/webhooks/${w.id}/deliveries`, readKey)).status).toBe(200);
    expect((await stored(w.id)).enabled).toBe(true);
  });

  it("404 for another organization's webhook, which stays untouched", async () => {
    const w = await create(key, hook({ secret: SECRET }));
    for (const [method, path, json] of [
      ['GET', `/v1/webhooks/${w.id}`],
      ['PATCH', `/v1/webhooks/${w.id}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/${w.id}`],
      ['GET', `/v1/webhooks/${w.id}/deliveries`],
    ] as const) {
      const r = await t.api(method, path, otherKey, json ? { json } : {});
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.json.error.code).toBe('not_found');
      expect(r.text).not.toContain(SECRET);
    }
    expect((await t.api('GET', '/v1/webhooks', otherKey)).json.data.map((x: { id: string }) => x.id)).not.toContain(
      w.id,
    );
    expect(await stored(w.id)).toMatchObject({ enabled: true, secret: SECRET });
  });
});

describe('fan-out to system webhooks', () => {
  it('plans one pending delivery per subscribed, enabled webhook, whose payload is the event', async () => {
    const k = (await t.onboard()).key;
    const formId = await createForm(t, k);
    const subscribed = await create(k, hook({ secret: SECRET }));
    const otherType = await create(k, hook({ events: ['delivery.dead'] }));
    const disabled = await create(k, hook({ enabled: false }));
    const wakes = t.wakes;

    const submissionId = await submit(formId);
    expect(t.wakes).toBeGreaterThan(wakes);

    const events = await t.api('GET', '/v1/events?type=submission.received', k);
    const event = events.json.data.find(
      (e: { subject: { submission_id: string } }) => e.subject.submission_id === submissionId,
    );
    expect(event).toBeTruthy();

    const r = await t.api('GET', `/v1/webhooks/${subscribed.id}/deliveries`, k);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      data: [
        {
          id: expect.stringMatching(/^whd_/),
          webhook_id: subscribed.id,
          event_id: event.id,
          event_type: 'submission.received',
          status: 'pending',
          attempts: 0,
          next_attempt_at: expect.stringMatching(/Z$/),
          payload: event,
          last_response: null,
          last_error: null,
          created_at: event.created_at,
          sent_at: null,
        },
      ],
      next_cursor: null,
    });
    expect(r.text).not.toContain(SECRET);
    expect((await t.api('GET', `/v1/webhooks/${otherType.id}/deliveries`, k)).json.data).toEqual([]);
    expect((await t.api('GET', `/v1/webhooks/${disabled.id}/deliveries`, k)).json.data).toEqual([]);

    expect((await t.api('GET', `/v1/webhooks/${subscribed.id}/deliveries?status=pending`, k)).json.data).toHaveLength(
      1,
    );
    expect((await t.api('GET', `/v1/webhooks/${subscribed.id}/deliveries?status=dead`, k)).json.data).toEqual([]);
    expect422(await t.api('GET', `/v1/webhooks/${subscribed.id}/deliveries?status=skipped`, k), 'status');
  });

  it('follows subscription changes: enabling, and submission.updated on a re-label', async () => {
    const k = (await t.onboard()).key;
    const formId = await createForm(t, k);
    const w = await create(k, hook({ events: ['submission.received', 'submission.updated'], enabled: false }));
    await submit(formId);
    expect((await t.api('GET', `/v1/webhooks/${w.id}/deliveries`, k)).json.data).toEqual([]);

    await t.api('PATCH', `/v1/webhooks/${w.id}`, k, { json: { enabled: true } });
    const s = await submit(formId);
    expect((await t.api('PATCH', `/v1/submissions/${s}`, k, { json: { status: 'spam' } })).status).toBe(200);
    const list = await t.api('GET', `/v1/webhooks/${w.id}/deliveries`, k);
    expect(list.json.data.map((d: { event_type: string }) => d.event_type)).toEqual([
      'submission.updated',
      'submission.received',
    ]);
    expect(list.json.data[0].payload).toMatchObject({
      type: 'submission.updated',
      subject: { submission_id: s, form_id: formId },
    });

    const page = await t.api('GET', `/v1/webhooks/${w.id}/deliveries?limit=1`, k);
    expect(page.json.data).toEqual([list.json.data[0]]);
    const next = await t.api('GET', `/v1/webhooks/${w.id}/deliveries?limit=1&cursor=${page.json.next_cursor}`, k);
    expect(next.json).toEqual({ data: [list.json.data[1]], next_cursor: null });
  });

  it('deleting a webhook removes its queued deliveries, so nothing is sent', async () => {
    const k = (await t.onboard()).key;
    const formId = await createForm(t, k);
    const w = await create(k, hook());
    const kept = await create(k, hook());
    await submit(formId);
    expect((await t.api('GET', `/v1/webhooks/${w.id}/deliveries`, k)).json.data).toHaveLength(1);
    expect((await t.api('DELETE', `/v1/webhooks/${w.id}`, k)).status).toBe(204);
    const rows = await t.deps.database.db
      .select()
      .from(systemWebhookDeliveries)
      .where(eq(systemWebhookDeliveries.webhookId, w.id));
    expect(rows).toEqual([]);
    expect((await t.api('GET', `/v1/webhooks/${w.id}/deliveries`, k)).status).toBe(404);
    expect((await t.api('GET', `/v1/webhooks/${kept.id}/deliveries`, k)).json.data).toHaveLength(1);
  });
});

describe('system webhooks in production (outbound guard)', () => {
  let p: TestEnv;
  beforeAll(async () => {
    p = await startTestApp({ NODE_ENV: 'production' });
  });
  afterAll(() => p.close());

  it('refuses private, loopback and link-local hosts on create and update, with a hint', async () => {
    const k = (await p.onboard()).key;
    for (const url of ['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://10.0.0.8/x', 'http://[::1]/x']) {
      const r = await p.api('POST', '/v1/webhooks', k, { json: hook({ url }) });
      expect(r.status, url).toBe(422);
      expect(r.json.error.hint).toMatch(/OUTBOUND_ALLOW_PRIVATE/);
      expect(r.json.error.details.issues[0].path).toBe('url');
    }
    const ok = await p.api('POST', '/v1/webhooks', k, { json: hook() });
    expect(ok.status).toBe(201);
    const moved = await p.api('PATCH', `/v1/webhooks/${ok.json.id}`, k, { json: { url: 'http://169.254.169.254/x' } });
    expect(moved.status).toBe(422);
    expect((await p.api('GET', `/v1/webhooks/${ok.json.id}`, k)).json.url).toBe(URL_A);
  });

  it('lets private hosts through when OUTBOUND_ALLOW_PRIVATE is set', async () => {
    const q = await startTestApp({ NODE_ENV: 'production', OUTBOUND_ALLOW_PRIVATE: 'true' });
    try {
      const r = await q.api('POST', '/v1/webhooks', (await q.onboard()).key, {
        json: hook({ url: 'http://127.0.0.1:9000/hook' }),
      });
      expect(r.status).toBe(201);
    } finally {
      await q.close();
    }
  });
});
