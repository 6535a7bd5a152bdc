import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { Claimed } from '../../server/db/rows.js';
import { systemWebhookDeliveries, systemWebhooks } from '../../server/db/schema.js';
import { settleAttempt } from '../../server/worker/settle.js';
import type { SendResult } from '../../server/worker/types.js';
import { newId } from '../../shared/ids.js';
import { tenantApp } from '../helpers/tenant.js';

// No worker: the test settles attempts itself, as the worker does after a send.
const { t, key, orgId } = await tenantApp();

const answer = (status: number): SendResult => ({
  ok: false,
  status_code: status,
  latency_ms: 3,
  response_excerpt: 'no',
  error: `HTTP ${status}`,
  retryable: status !== 410,
});

/** A system webhook, and one of its deliveries claimed with its last attempt (as a claim leaves it). */
async function claimedHookDelivery(url: string, attempts: number, maxAttempts: number): Promise<Claimed> {
  const created = await t.api('POST', '/v1/webhooks', key, { json: { url, events: ['drift.detected'] } });
  expect(created.status).toBe(201);
  const id = newId('webhookDelivery');
  const now = t.deps.now();
  const lease = new Date(now.getTime() + 60_000);
  await t.deps.database.db.insert(systemWebhookDeliveries).values({
    id,
    orgId,
    webhookId: created.json.id,
    eventId: newId('event'),
    eventType: 'drift.detected',
    status: 'sending',
    attempts,
    maxAttempts,
    leaseUntil: lease,
    payload: { type: 'drift.detected' },
    createdAt: now,
  });
  return {
    id,
    org_id: orgId,
    target_id: created.json.id,
    attempts,
    max_attempts: maxAttempts,
    payload: { type: 'drift.detected' },
    event_type: 'drift.detected',
    submission_id: null,
    form_id: null,
    route_id: null,
    type: 'webhook',
    lease_until: lease,
  };
}

describe('one settle path for both outboxes', () => {
  it('a system-webhook delivery that spent its attempts is dead and says it gave up, as a route delivery does', async () => {
    const row = await claimedHookDelivery('https://example.com/gave-up', 3, 3);
    const settled = await settleAttempt(t.deps, 'hook', row, answer(500));
    expect(settled.retryAt).toBeNull();
    const [stored] = await t.deps.database.db
      .select()
      .from(systemWebhookDeliveries)
      .where(eq(systemWebhookDeliveries.id, row.id));
    expect(stored).toMatchObject({ status: 'dead', lastError: 'HTTP 500 (gave up after 3 attempts)' });
    const [hook] = await t.deps.database.db.select().from(systemWebhooks).where(eq(systemWebhooks.id, row.target_id));
    expect(hook).toMatchObject({ consecutiveFailures: 1, enabled: true });
  });

  it('a system webhook switched off by a 410 reports the webhook.disabled deliveries it planned (the worker claims them at once)', async () => {
    const watcher = await t.api('POST', '/v1/webhooks', key, {
      json: { url: 'https://example.com/watcher', events: ['webhook.disabled'] },
    });
    expect(watcher.status).toBe(201);
    const row = await claimedHookDelivery('https://example.com/gone', 1, 10);
    const settled = await settleAttempt(t.deps, 'hook', row, answer(410));
    expect(settled).toEqual({ dispatched: 1, retryAt: null });
    const [hook] = await t.deps.database.db.select().from(systemWebhooks).where(eq(systemWebhooks.id, row.target_id));
    expect(hook).toMatchObject({ enabled: false, disabledReason: 'gone' });
    const planned = await t.deps.database.db
      .select()
      .from(systemWebhookDeliveries)
      .where(eq(systemWebhookDeliveries.webhookId, watcher.json.id));
    expect(planned).toHaveLength(1);
    expect(planned[0]).toMatchObject({ eventType: 'webhook.disabled', status: 'pending' });
  });
});
