import crypto from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { events } from '../../server/db/schema.js';
import { fileReceivers, until } from '../helpers/receiver.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, orgId, otherKey } = await tenantApp({
  // One second of unbroken failures switches a destination off; retries come every 20-640 ms.
  env: { RETRY_BASE_MS: '20', DESTINATION_DISABLE_AFTER_S: '1', WEBHOOK_TIMEOUT_MS: '5000' },
  worker: true,
});
const receiver = fileReceivers();

async function routed(url: string) {
  const form = await t.api('POST', '/v1/forms', key, { json: { name: `F ${crypto.randomUUID().slice(0, 8)}` } });
  const dest = await t.api('POST', '/v1/destinations', key, {
    json: { type: 'webhook', name: 'hook', config: { url } },
  });
  expect(dest.json).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  await t.api('POST', '/v1/routes', key, { json: { form_id: form.json.id, destination_id: dest.json.id } });
  return { formId: form.json.id as string, destId: dest.json.id as string };
}

async function submit(formId: string, data: Record<string, unknown>) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBe(200);
  const list = await t.api('GET', `/v1/deliveries?submission_id=${r.json.submission_id}`, key);
  return list.json.data[0].id as string;
}

const delivery = async (id: string) => (await t.api('GET', `/v1/deliveries/${id}`, key)).json;
const destination = async (id: string) => (await t.api('GET', `/v1/destinations/${id}`, key)).json;
const waitStatus = (id: string, status: string, ms = 10_000) =>
  until(`delivery ${id} ${status}`, async () => ((await delivery(id)).status === status ? delivery(id) : null), ms);
const eventsOf = (type: string) =>
  t.deps.database.db
    .select()
    .from(events)
    .where(and(eq(events.orgId, orgId), eq(events.type, type)));

describe('destinations that switch themselves off, and come back', () => {
  it('disables a destination failing for DESTINATION_DISABLE_AFTER_S; its deliveries wait unattempted; enabling sends them', async () => {
    const hook = await receiver(() => ({ status: 500, body: 'down' }));
    const { formId, destId } = await routed(hook.url);
    const first = await submit(formId, { n: 1 });
    const off = await until(
      'destination disabled',
      async () => {
        const d = await destination(destId);
        return d.enabled === false ? d : null;
      },
      15_000,
    );
    expect(off.disabled_reason).toMatch(/^failing since \d{4}-/);
    expect(off.failing_since).not.toBeNull();
    const [ev] = (await eventsOf('destination.disabled')).filter((e) => e.subject.destination_id === destId);
    expect(ev.data).toMatchObject({ reason: off.disabled_reason });
    // The failed delivery waits as pending, not due; a new submission waits too; nothing is attempted.
    const waiting = await waitStatus(first, 'pending');
    expect(waiting.next_attempt_at).toBeNull();
    const second = await submit(formId, { n: 2 });
    const seen = hook.requests.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(hook.requests.length).toBe(seen);
    expect(await delivery(second)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: null });

    hook.set(() => ({ status: 200 }));
    const on = await t.api('PATCH', `/v1/destinations/${destId}`, key, { json: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    await waitStatus(first, 'sent');
    await waitStatus(second, 'sent');
    const ids = hook.requests.map((q) => q.json?.id);
    expect(ids).toContain(first);
    expect(ids).toContain(second);
  });

  it('disables a webhook destination at once on 410 with reason gone', async () => {
    const hook = await receiver(() => ({ status: 410, body: 'gone' }));
    const { formId, destId } = await routed(hook.url);
    const d = await submit(formId, { n: 1 });
    await waitStatus(d, 'dead');
    expect(await destination(destId)).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    expect((await eventsOf('destination.disabled')).some((e) => e.subject.destination_id === destId)).toBe(true);
  });

  it('pauses by hand with PATCH {enabled:false} and resumes with {enabled:true}; a success clears failing_since', async () => {
    const hook = await receiver();
    const { formId, destId } = await routed(hook.url);
    const off = await t.api('PATCH', `/v1/destinations/${destId}`, key, { json: { enabled: false } });
    expect(off.json).toMatchObject({ enabled: false });
    const d = await submit(formId, { n: 1 });
    await new Promise((r) => setTimeout(r, 300));
    expect(await delivery(d)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: null });
    expect(hook.requests).toHaveLength(0);
    expect((await t.api('PATCH', `/v1/destinations/${destId}`, otherKey, { json: { enabled: true } })).status).toBe(
      404,
    );
    await t.api('PATCH', `/v1/destinations/${destId}`, key, { json: { enabled: true } });
    expect((await waitStatus(d, 'sent')).attempts).toBe(1);
    expect((await destination(destId)).failing_since).toBeNull();
  });
});

describe('system webhooks that switch themselves off', () => {
  it('disables a system webhook answering 410 (webhook.disabled), keeps its queue waiting, and re-enabling sends it', async () => {
    // The first answer (410) waits until both events are queued for the hook (a delivery.sent that
    // comes after the hook is off plans nothing for it); others fail (500).
    let bothQueued = () => {};
    const queued = new Promise<void>((r) => {
      bothQueued = r;
    });
    const hook = await receiver((_q, n) => (n === 1 ? { status: 410, after: queued } : { status: 500 }));
    const watcher = await receiver();
    const created = await t.api('POST', '/v1/webhooks', key, { json: { url: hook.url, events: ['delivery.sent'] } });
    await t.api('POST', '/v1/webhooks', key, { json: { url: watcher.url, events: ['webhook.disabled'] } });
    const hookId = created.json.id as string;
    const target = await receiver();
    const { formId } = await routed(target.url);
    await submit(formId, { n: 1 });
    await submit(formId, { n: 2 });
    const deliveries = async () => (await t.api('GET', `/v1/webhooks/${hookId}/deliveries`, key)).json.data;
    await until('both events queued for the hook', async () => (await deliveries()).length === 2);
    bothQueued();
    const off = await until(
      'webhook disabled',
      async () => {
        const w = (await t.api('GET', `/v1/webhooks/${hookId}`, key)).json;
        return w.enabled === false ? w : null;
      },
      10_000,
    );
    expect(off.disabled_reason).toBe('gone');
    await until('webhook.disabled at the watcher', async () =>
      watcher.requests.find((q) => q.json?.type === 'webhook.disabled' && q.json?.subject?.webhook_id === hookId),
    );
    // What the deliveries last looked like, should they never settle so (a failure says it).
    let seen = '';
    const settled = await until('one dead, one waiting', async () => {
      const all = await deliveries();
      seen = JSON.stringify(
        all.map((d: Record<string, unknown>) => [d.status, d.attempts, d.next_attempt_at, d.last_error]),
      );
      const byStatus = all.map((d: { status: string }) => d.status).sort();
      return all.length === 2 && byStatus.join() === 'dead,pending' ? all : null;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the deliveries last: ${seen}`);
    });
    const waiting = settled.find((d: { status: string }) => d.status === 'pending');
    expect(waiting.next_attempt_at).toBeNull();
    hook.set(() => ({ status: 200 }));
    await t.api('PATCH', `/v1/webhooks/${hookId}`, key, { json: { enabled: true } });
    // The dead one comes back by bulk replay; the waiting one is sent on its own.
    const replay = await t.api('POST', `/v1/webhooks/${hookId}/deliveries/retry`, key, { json: {} });
    expect(replay.status).toBe(200);
    await until('every delivery of the webhook sent', async () => {
      const all = await deliveries();
      return all.length === 2 && all.every((d: { status: string }) => d.status === 'sent');
    });
  });
});
