import crypto from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveries, routes } from '../../server/db/schema.js';
import { planDigests } from '../../server/worker/digest.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { type Behaviour, fileReceivers, until } from '../helpers/receiver.js';
import { orgIdOf, seedSubmission } from '../helpers/seed.js';

let t: TestEnv;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ RETRY_BASE_MS: '20', WEBHOOK_TIMEOUT_MS: '1000' });
  key = (await t.onboard()).key;
});

afterAll(() => t.close());
const receiver = fileReceivers();

async function chatRoute(type: 'slack' | 'discord', behaviour: Behaviour, mode?: Record<string, unknown>) {
  const hook = await receiver(behaviour);
  const form = await t.api('POST', '/v1/forms', key, { json: { name: `Chat ${crypto.randomUUID().slice(0, 8)}` } });
  const dest = await t.api('POST', '/v1/destinations', key, { json: { type, name: type, config: { url: hook.url } } });
  expect(dest.status).toBe(201);
  const route = await t.api('POST', '/v1/routes', key, {
    json: { form_id: form.json.id, destination_id: dest.json.id, ...(mode ? { mode } : {}) },
  });
  expect(route.status).toBe(201);
  return { hook, formId: form.json.id as string, destId: dest.json.id as string, routeId: route.json.id as string };
}

async function submit(formId: string, data: Record<string, unknown>) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  const list = await t.api('GET', `/v1/deliveries?submission_id=${r.json.submission_id}`, key);
  expect(list.json.data).toHaveLength(1);
  return list.json.data[0].id as string;
}

const settled = (id: string, status: string, timeoutMs = 10_000) =>
  until(
    `delivery ${id} ${status}`,
    async () => {
      const d = (await t.api('GET', `/v1/deliveries/${id}`, key)).json;
      return d.status === status ? d : null;
    },
    timeoutMs,
  );

describe('slack and discord deliveries through the worker', () => {
  it('a claimed slack delivery answered 404 is dead after one attempt, last_error saying the webhook was deleted', async () => {
    const { hook, formId } = await chatRoute('slack', () => ({ status: 404, body: 'no_service' }));
    const id = await submit(formId, { name: 'Ada' }); // planned while no worker runs: the claim takes it
    const [row] = await t.deps.database.db.select().from(deliveries).where(eq(deliveries.id, id));
    expect(row.maxAttempts).toBe(8);
    await t.startWorker();
    const d = await settled(id, 'dead');
    expect(d.attempts).toBe(1);
    expect(d.last_error).toBe(
      'slack: the incoming webhook was deleted or revoked (HTTP 404: no_service); create a new one and update config.url',
    );
    expect(hook.requests).toHaveLength(1);
  });

  it('a discord delivery handed to the worker at intake answered 401 is dead at once too', async () => {
    const { hook, formId } = await chatRoute('discord', () => ({
      status: 401,
      body: '{"message": "Invalid Webhook Token", "code": 50027}',
      headers: { 'content-type': 'application/json' },
    }));
    const id = await submit(formId, { name: 'Ada' });
    const d = await settled(id, 'dead');
    expect(d.attempts).toBe(1);
    expect(d.last_error).toContain('deleted or revoked (HTTP 401: Invalid Webhook Token)');
    expect(hook.requests).toHaveLength(1);
  });

  it('a 429 waits the retry_after Discord asked for, then the retry is sent', async () => {
    const { hook, formId } = await chatRoute('discord', (_req, n) =>
      n === 1
        ? {
            status: 429,
            body: '{"message": "You are being rate limited.", "retry_after": 0.8, "global": false}',
            headers: { 'content-type': 'application/json' },
          }
        : { status: 204, body: '' },
    );
    const id = await submit(formId, { name: 'Ada' });
    const failed = await settled(id, 'failed');
    expect(failed.last_error).toBe('discord: rate limited (HTTP 429: You are being rate limited.)');
    // The 20 ms backoff alone would be due already; the 800 ms asked for is still ahead.
    expect(new Date(failed.next_attempt_at).getTime() - Date.now()).toBeGreaterThan(300);
    const sent = await settled(id, 'sent');
    expect(sent.attempts).toBe(2);
    expect(hook.requests).toHaveLength(2);
  });

  it('a slack failure other than 404/401 is retried with the backoff until sent', async () => {
    const { formId } = await chatRoute('slack', (_req, n) =>
      n < 3 ? { status: 500, body: 'internal_error' } : { status: 200, body: 'ok' },
    );
    const id = await submit(formId, { name: 'Ada' });
    const d = await settled(id, 'sent');
    expect(d.attempts).toBe(3);
    expect(d.last_error).toBeNull();
  });

  it('a digest route to slack sends one message per period listing the submissions', async () => {
    const orgId = await orgIdOf(t, key);
    const { hook, formId, routeId } = await chatRoute('slack', () => ({ status: 200, body: 'ok' }), {
      type: 'digest',
      cron: '* * * * *',
      timezone: 'UTC',
    });
    // Switched off while the closed period is seeded: the running worker's own digest planning
    // must not take the period with only some of its submissions.
    await t.deps.database.db
      .update(routes)
      .set({ createdAt: new Date(Date.now() - 600_000), enabled: false })
      .where(eq(routes.id, routeId));
    const periodStart = new Date(Math.floor((Date.now() - 60_000) / 60_000) * 60_000);
    for (let i = 0; i < 3; i++) {
      await seedSubmission(t, {
        orgId,
        formId,
        data: { n: i, who: '<!channel>' },
        receivedAt: new Date(periodStart.getTime() + 1000 * (i + 1)),
      });
    }
    await t.deps.database.db.update(routes).set({ enabled: true }).where(eq(routes.id, routeId));
    await planDigests(t.deps);
    await hook.waitFor((reqs) => reqs.length >= 1);
    const [msg] = hook.requests;
    expect(msg.json.blocks[0].text.text).toMatch(/^Digest: 3 submissions to Chat /);
    expect(msg.json.blocks.filter((b: { type: string }) => b.type === 'section')).toHaveLength(3);
    expect(JSON.stringify(msg.json)).not.toContain('<!channel>');
    await until('digest sent', async () => {
      const rows = await t.deps.database.rows<{ status: string }>(
        sql`select status from deliveries where route_id = ${routeId}`,
      );
      return rows.length === 1 && rows[0].status === 'sent';
    });
    expect(hook.requests).toHaveLength(1);
  });
});
