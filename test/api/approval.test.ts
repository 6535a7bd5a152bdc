import crypto from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver, until } from '../helpers/receiver.js';
import { type Session, signIn } from '../helpers/session.js';

/** New outbound targets wait for a person (issue 33, part 4): settings.approve_destinations "keys". */
let t: TestEnv;
let hook: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  t = await startTestApp();
  await t.startWorker();
  hook = await startReceiver();
});
afterAll(async () => {
  await hook.close();
  await t.close();
});

const fresh = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const as = (s: Session, method: string, path: string, json?: unknown) =>
  t.request(method, path, { headers: { cookie: s.cookie }, ...(json === undefined ? {} : { json }) });

/** An owner (key and session in their organization), a member signed in there, and another organization. */
async function tenant(approve: 'never' | 'keys') {
  const o = await t.onboard(fresh('owner'));
  const orgId = o.verify.organization.id as string;
  const owner = await signIn(t, o.email);
  if (approve === 'keys') {
    const set = await t.api('PATCH', `/v1/organizations/${orgId}`, o.key, {
      json: { settings: { approve_destinations: 'keys' } },
    });
    expect(set.status).toBe(200);
    expect(set.json.settings.approve_destinations).toBe('keys');
  }
  const inv = await as(owner, 'POST', '/v1/invitations', { email: fresh('member'), role: 'member' });
  expect(inv.status).toBe(201);
  const member = await signIn(t, inv.json.email);
  expect((await as(member, 'POST', `/v1/invitations/${inv.json.id}/accept`)).status).toBe(200);
  expect((await as(member, 'POST', `/v1/organizations/${orgId}/switch`)).status).toBe(200);
  return { key: o.key, email: o.email, orgId, owner, member };
}

/** A form routed to a new webhook destination to `url`, created with `key`. */
async function routedHook(key: string, url: string, name = 'Agent hook') {
  const form = await t.api('POST', '/v1/forms', key, { json: { name: `Form ${name}` } });
  expect(form.status).toBe(201);
  const dest = await t.api('POST', '/v1/destinations', key, { json: { type: 'webhook', name, config: { url } } });
  expect(dest.status).toBe(201);
  const route = await t.api('POST', '/v1/routes', key, {
    json: { form_id: form.json.id, destination_id: dest.json.id },
  });
  expect(route.status).toBe(201);
  return { formId: form.json.id as string, dest: dest.json, routeId: route.json.id as string };
}

async function submit(formId: string, data: Record<string, unknown>) {
  const r = await t.request('POST', `/s/${formId}`, { json: data, headers: { accept: 'application/json' } });
  expect(r.status).toBeLessThan(300);
  return r.json.submission_id as string;
}

async function deliveryOf(key: string, submissionId: string) {
  const r = await t.api('GET', `/v1/deliveries?submission_id=${submissionId}`, key);
  expect(r.status).toBe(200);
  return r.json.data[0];
}

async function eventsOf(key: string, type: string) {
  const r = await t.api('GET', `/v1/events?type=${type}`, key);
  expect(r.status).toBe(200);
  return r.json.data as Array<{ type: string; subject: Record<string, unknown>; data: Record<string, unknown> }>;
}

describe('settings.approve_destinations "never" (the default)', { timeout: 90_000 }, () => {
  it('changes nothing: a key-made destination is approved and its test is sent', async () => {
    const { key, orgId } = await tenant('never');
    const org = await t.api('GET', '/v1/organizations', key);
    expect(org.json.data.find((o: { id: string }) => o.id === orgId).settings.approve_destinations).toBeUndefined();
    const { dest } = await routedHook(key, hook.url);
    expect(dest.approval).toBe('approved');
    const test = await t.api('POST', `/v1/destinations/${dest.id}/test`, key);
    expect(test.status).toBe(200);
    expect(test.json.ok).toBe(true);
  });
});

describe('settings.approve_destinations "keys"', { timeout: 90_000 }, () => {
  it('a key cannot turn it off; a session can, and on again', async () => {
    const { key, orgId, owner } = await tenant('keys');
    const off = await t.api('PATCH', `/v1/organizations/${orgId}`, key, {
      json: { settings: { approve_destinations: 'never' } },
    });
    expect(off.status).toBe(403);
    expect(off.json.error.hint).toMatch(/session/);
    const removed = await t.api('PATCH', `/v1/organizations/${orgId}`, key, {
      json: { settings: { approve_destinations: null } },
    });
    expect(removed.status).toBe(403);
    const bySession = await as(owner, 'PATCH', `/v1/organizations/${orgId}`, {
      settings: { approve_destinations: 'never' },
    });
    expect(bySession.status).toBe(200);
    expect(bySession.json.settings.approve_destinations).toBe('never');
    const bad = await as(owner, 'PATCH', `/v1/organizations/${orgId}`, {
      settings: { approve_destinations: 'always' },
    });
    expect(bad.status).toBe(422);
  });

  it('a key-made destination waits: delivery unattempted, test refused, only an owner or admin session approves, then it is sent', async () => {
    const { key, email, owner, member } = await tenant('keys');
    const mailsBefore = t.smtp.messages.length;
    const { formId, dest } = await routedHook(key, `${hook.url}/approve-me`);
    expect(dest.approval).toBe('pending');
    expect((await t.api('GET', `/v1/destinations/${dest.id}`, key)).json.approval).toBe('pending');

    // The owner is mailed the link to the approval page.
    const mail = await t.smtp.waitFor(
      (m) => t.smtp.messages.indexOf(m) >= mailsBefore && m.to.includes(email) && m.subject.includes('Agent hook'),
    );
    expect(mail.text).toContain(`/app/approvals/${dest.id}`);
    expect(mail.html).toContain(`/app/approvals/${dest.id}`);

    const requested = await eventsOf(key, 'destination.approval_requested');
    expect(requested.map((e) => e.subject.destination_id)).toContain(dest.id);

    const sid = await submit(formId, { name: 'Waits' });
    const waiting = await deliveryOf(key, sid);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: null });

    // explain says why nothing was sent, who asked, and what sends it.
    const why = await t.api('GET', `/v1/submissions/${sid}/explain`, key);
    expect(why.status).toBe(200);
    expect(why.json.outcome).toBe('waiting');
    expect(why.json.deliveries[0]).toMatchObject({ state: 'approval_pending', attempts: [] });
    expect(why.json.routes.find((r: { route_id: string }) => r.route_id)?.reason).toBe('approval_pending');
    expect(why.json.summary).toContain('Not sent to webhook "Agent hook"');
    expect(why.json.summary).toContain('waits for an owner or admin to approve it');
    expect(why.json.summary).toContain('/app/approvals');
    expect(why.json.summary).toContain('sends the 1 waiting');

    const test = await t.api('POST', `/v1/destinations/${dest.id}/test`, key);
    expect(test.status).toBe(409);
    expect(test.json.error.code).toBe('approval_pending');
    expect(test.json.error.hint).toContain(`/app/approvals/${dest.id}`);

    const byKey = await t.api('POST', `/v1/destinations/${dest.id}/approve`, key);
    expect(byKey.status).toBe(403);
    expect(byKey.json.error.hint).toBeTruthy();
    const byMember = await as(member, 'POST', `/v1/destinations/${dest.id}/approve`);
    expect(byMember.status).toBe(403);
    expect((await as(member, 'POST', `/v1/destinations/${dest.id}/reject`)).status).toBe(403);
    // Still waiting after all that, and nothing reached the receiver.
    expect((await deliveryOf(key, sid)).attempts).toBe(0);
    expect(hook.requests.filter((r) => r.url === '/hook/approve-me')).toHaveLength(0);

    const approved = await as(owner, 'POST', `/v1/destinations/${dest.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.json.approval).toBe('approved');
    await until('the waiting delivery reaches the receiver', async () =>
      hook.requests.some((r) => r.url === '/hook/approve-me' && r.json?.submission?.id === sid),
    );
    await until('the delivery is sent', async () => (await deliveryOf(key, sid)).status === 'sent');
    const events = await eventsOf(key, 'destination.approved');
    expect(events.find((e) => e.subject.destination_id === dest.id)?.data.released).toBe(1);
    expect((await as(owner, 'POST', `/v1/destinations/${dest.id}/approve`)).status).toBe(409);

    // Re-pointing it with a key makes it wait again; a new name does not.
    const renamed = await t.api('PATCH', `/v1/destinations/${dest.id}`, key, { json: { name: 'Renamed' } });
    expect(renamed.json.approval).toBe('approved');
    const moved = await t.api('PATCH', `/v1/destinations/${dest.id}`, key, {
      json: { config: { url: `${hook.url}/elsewhere` } },
    });
    expect(moved.status).toBe(200);
    expect(moved.json.approval).toBe('pending');
    const later = await submit(formId, { name: 'After the move' });
    expect(await deliveryOf(key, later)).toMatchObject({ status: 'pending', attempts: 0, next_attempt_at: null });
  });

  it('rejecting deletes the destination and its routes and skips what waited (rejected)', async () => {
    const { key, owner } = await tenant('keys');
    const { formId, dest, routeId } = await routedHook(key, `${hook.url}/reject-me`, 'Exfiltrate');
    const sid = await submit(formId, { secret: 'not for them' });
    const rejected = await as(owner, 'POST', `/v1/destinations/${dest.id}/reject`);
    expect(rejected.status).toBe(204);
    expect((await t.api('GET', `/v1/destinations/${dest.id}`, key)).status).toBe(404);
    expect((await t.api('GET', `/v1/routes/${routeId}`, key)).status).toBe(404);
    expect(await deliveryOf(key, sid)).toMatchObject({ status: 'skipped', skip_reason: 'rejected', attempts: 0 });
    const why = (await t.api('GET', `/v1/submissions/${sid}/explain`, key)).json;
    expect(why.deliveries[0]).toMatchObject({ state: 'skipped', skip_reason: 'rejected' });
    expect(why.deliveries[0].why).toContain('rejected');
    expect(why.routes.some((r: { reason: string }) => r.reason === 'rejected')).toBe(true);
    const events = await eventsOf(key, 'destination.rejected');
    expect(events.find((e) => e.subject.destination_id === dest.id)?.data).toMatchObject({
      skipped: 1,
      name: 'Exfiltrate',
    });
    expect(hook.requests.filter((r) => r.url === '/hook/reject-me')).toHaveLength(0);
  });

  it('a destination made by a session needs no approval; another organization’s id is 404', async () => {
    const { owner, key } = await tenant('keys');
    const made = await as(owner, 'POST', '/v1/destinations', {
      type: 'webhook',
      name: 'By a person',
      config: { url: `${hook.url}/person` },
    });
    expect(made.status).toBe(201);
    expect(made.json.approval).toBe('approved');
    const moved = await as(owner, 'PATCH', `/v1/destinations/${made.json.id}`, { config: { url: `${hook.url}/p2` } });
    expect(moved.json.approval).toBe('approved');

    const other = await tenant('keys');
    const theirs = await routedHook(other.key, `${hook.url}/theirs`);
    expect((await as(owner, 'POST', `/v1/destinations/${theirs.dest.id}/approve`)).status).toBe(404);
    expect((await as(owner, 'POST', `/v1/destinations/${theirs.dest.id}/reject`)).status).toBe(404);
    expect((await t.api('GET', `/v1/destinations/${theirs.dest.id}`, key)).status).toBe(404);
    expect((await t.api('GET', `/v1/destinations/${theirs.dest.id}`, other.key)).json.approval).toBe('pending');
  });

  it('system webhooks do not wait yet: under "keys" a key cannot create or re-point one, a session can', async () => {
    const { key, owner } = await tenant('keys');
    const body = { url: `${hook.url}/events`, events: ['submission.received'] };
    const byKey = await t.api('POST', '/v1/webhooks', key, { json: body });
    expect(byKey.status).toBe(403);
    expect(byKey.json.error.hint).toMatch(/owner or admin/);
    const bySession = await as(owner, 'POST', '/v1/webhooks', body);
    expect(bySession.status).toBe(201);
    const moved = await t.api('PATCH', `/v1/webhooks/${bySession.json.id}`, key, {
      json: { url: `${hook.url}/other` },
    });
    expect(moved.status).toBe(403);
    const renamedEvents = await t.api('PATCH', `/v1/webhooks/${bySession.json.id}`, key, {
      json: { events: ['delivery.dead'] },
    });
    expect(renamedEvents.status).toBe(200);
  });

  it('email recipients changed by a key count as a new target', async () => {
    const { key } = await tenant('keys');
    const made = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'email', name: 'Inbox', config: { to: ['a@example.com'] } },
    });
    expect(made.json.approval).toBe('pending');
  });

  it('the quickstart with a key says a person must approve, and where; so does the MCP quickstart tool', async () => {
    const { key } = await tenant('keys');
    const q = await t.api('POST', '/v1/quickstart', key, {
      json: { name: 'Contact', webhook: { url: `${hook.url}/qs` } },
    });
    expect(q.status).toBe(201);
    expect(q.json.destinations.every((d: { approval: string }) => d.approval === 'pending')).toBe(true);
    expect(q.json.approval.approve_url).toBe('http://127.0.0.1:8787/app/approvals');
    expect(q.json.approval.destinations).toHaveLength(2);
    expect(q.json.next[0]).toMatchObject({
      method: 'GET',
      path: `/v1/destinations/${q.json.approval.destinations[0]}`,
    });
    expect(q.json.next[0].why).toContain('A person must approve');
    expect(q.json.next[0].why).toContain('http://127.0.0.1:8787/app/approvals');

    const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8787/mcp'), {
      fetch: (url, init) => Promise.resolve(t.app.request(String(url), init)),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: 'approval-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const r: any = await client.callTool({ name: 'quickstart_and_verify', arguments: { name: 'Via MCP' } });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent.ok).toBe(false);
      expect(r.structuredContent.approval.approve_url).toBe('http://127.0.0.1:8787/app/approvals');
      expect(r.content[0].text).toContain('A person must approve');
      expect(r.structuredContent.next[0]).toContain('/app/approvals');
    } finally {
      await client.close();
    }
  });
});
