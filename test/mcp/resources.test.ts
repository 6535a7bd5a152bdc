import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { until } from '../helpers/receiver.js';
import { connect, listen, type Mode } from './connect.js';

/**
 * The MCP resources over stdio (`formsvc mcp` as a child process, calling the app over loopback)
 * and over HTTP (an SDK client in a /mcp session): lists, templates, reads with real data, scope
 * and tenancy, and subscriptions fed by real submissions.
 */
let t: TestEnv;
let base: string;
let manage: string;
let read: string;
let submitOnly: string;
let stranger: string;
let formA: string;
let formC: string;
let someSubmission: string;
const cleanups: (() => Promise<unknown>)[] = [];

const post = async (formId: string, data: Record<string, unknown>) => {
  const r = await t.request('POST', `/s/${formId}`, { json: data });
  expect(r.status, r.text).toBe(200);
  return r.json.submission_id as string;
};

beforeAll(async () => {
  t = await startTestApp();
  const served = await listen(t);
  base = served.base;
  cleanups.push(served.close);
  const first = await t.onboard();
  manage = first.key;
  read = (await t.onboard(first.email, { scopes: ['read'], key_name: 'reader' })).key;
  submitOnly = (await t.onboard(first.email, { scopes: ['submit'], key_name: 'poster' })).key;
  stranger = (await t.onboard()).key;

  const qs = await t.api('POST', '/v1/quickstart', manage, {
    json: { name: 'Leads', notify_email: 'ops@example.com' },
  });
  expect(qs.status, qs.text).toBeLessThan(300);
  formA = qs.json.form.id;
  formC = (await t.api('POST', '/v1/forms', manage, { json: { name: 'Careers' } })).json.id;
  const schema = await t.api('POST', `/v1/forms/${formA}/schema`, manage, {
    json: { json_schema: { type: 'object', properties: { email: { type: 'string' }, message: { type: 'string' } } } },
  });
  expect(schema.status, schema.text).toBe(201);
  for (let i = 0; i < 26; i += 1) {
    someSubmission = await post(formA, { email: `p${i}@example.com`, message: `hello number ${i}`, extra: i });
  }
  await until('drift on extra', async () => {
    const d = await t.api('GET', `/v1/forms/${formA}/drift`, read);
    return d.json.data.some((e: any) => e.field === 'extra');
  });
}, 120_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  await t?.close();
});

const text = (r: any) => JSON.parse(r.contents[0].text);

describe.each<Mode>(['http', 'stdio'])('MCP resources over %s', (mode) => {
  let c: Client;
  const updated: string[] = [];
  beforeAll(async () => {
    c = await connect(mode, t, base, manage);
    cleanups.push(() => c.close());
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
  }, 60_000);

  it('lists the resources with real items and the templates, and advertises subscribe', async () => {
    expect(c.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: false });
    const uris = (await c.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(
      expect.arrayContaining([
        'formsvc://llms.txt',
        'formsvc://openapi.json',
        'formsvc://forms',
        `formsvc://forms/${formA}`,
        `formsvc://forms/${formC}`,
        `formsvc://forms/${formA}/submissions`,
        `formsvc://forms/${formA}/drift`,
        `formsvc://submissions/${someSubmission}`,
      ]),
    );
    const templates = (await c.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
    expect(templates.sort()).toEqual(
      [
        'formsvc://forms/{id}',
        'formsvc://forms/{id}/drift',
        'formsvc://forms/{id}/submissions',
        'formsvc://forms/{id}/submissions{?cursor}',
        'formsvc://submissions/{id}',
      ].sort(),
    );
  });

  it('reads each resource and template with real data', async () => {
    expect(((await c.readResource({ uri: 'formsvc://llms.txt' })) as any).contents[0].text).toContain('# formsvc');
    const forms = text(await c.readResource({ uri: 'formsvc://forms' }));
    expect(forms.data.map((f: any) => f.id)).toEqual(expect.arrayContaining([formA, formC]));

    const form = text(await c.readResource({ uri: `formsvc://forms/${formA}` }));
    expect(form.form).toMatchObject({ id: formA, name: 'Leads' });
    expect(form.schema.json_schema.properties).toHaveProperty('email');
    expect(form.routes.length).toBeGreaterThan(0);
    expect(form.routes.every((r: any) => r.form_id === formA)).toBe(true);
    expect(text(await c.readResource({ uri: `formsvc://forms/${formC}` })).schema).toBeNull();

    // Newest first, 25 a page (the other transport's subscription test may have posted more by now).
    const all = (await t.api('GET', `/v1/forms/${formA}/submissions?limit=200`, read)).json.data.map((s: any) => s.id);
    const page1 = text(await c.readResource({ uri: `formsvc://forms/${formA}/submissions` }));
    expect(page1.data.map((s: any) => s.id)).toEqual(all.slice(0, 25));
    expect(page1.next_uri).toMatch(new RegExp(`^formsvc://forms/${formA}/submissions\\?cursor=`));
    const page2 = text(await c.readResource({ uri: page1.next_uri }));
    expect(page2.data.map((s: any) => s.id)).toEqual(all.slice(25, 50));
    expect(page2.next_uri).toBeNull();

    const drift = text(await c.readResource({ uri: `formsvc://forms/${formA}/drift` }));
    expect(drift.data.find((d: any) => d.field === 'extra')).toMatchObject({ kind: 'new_field', status: 'open' });

    const sub = text(await c.readResource({ uri: `formsvc://submissions/${someSubmission}` }));
    expect(sub).toMatchObject({ id: someSubmission, form_id: formA, data: { email: 'p25@example.com' } });
    expect(sub.deliveries.length).toBeGreaterThan(0);
    expect(sub.deliveries[0].submission_id).toBe(someSubmission);
  });

  it('refuses another organization’s ids and a key that cannot read', async () => {
    const other = await connect(mode, t, base, stranger);
    cleanups.push(() => other.close());
    const err = await other.readResource({ uri: `formsvc://forms/${formA}` }).catch((e) => e);
    expect(err).toBeInstanceOf(McpError);
    expect(err.code).toBe(-32002);
    expect(err.message).toContain('not_found');
    expect(err.message).toContain('Hint:');
    const sub = await other.readResource({ uri: `formsvc://submissions/${someSubmission}` }).catch((e) => e);
    expect(sub.code).toBe(-32002);
    const theirs = (await other.listResources()).resources.map((r) => r.uri);
    expect(theirs.some((u) => u.includes(formA) || u.includes(someSubmission))).toBe(false);

    const poster = await connect(mode, t, base, submitOnly);
    cleanups.push(() => poster.close());
    const seen = (await poster.listResources()).resources.map((r) => r.uri);
    expect(seen).toEqual(expect.arrayContaining(['formsvc://llms.txt', 'formsvc://openapi.json']));
    expect(seen.filter((u) => u.startsWith('formsvc://forms') || u.startsWith('formsvc://submissions'))).toEqual(
      mode === 'http' ? [] : ['formsvc://forms'],
    );
    const denied = await poster.readResource({ uri: `formsvc://forms/${formA}` }).catch((e) => e);
    expect(denied).toBeInstanceOf(McpError);
    // Over HTTP the read resources are not registered for such a key; over stdio the API refuses.
    expect(denied.message).toMatch(mode === 'http' ? /not found/i : /forbidden/);
  });

  it('notifies a subscriber when a submission arrives, and stops after unsubscribe', async () => {
    const uriA = `formsvc://forms/${formA}/submissions`;
    const uriC = `formsvc://forms/${formC}/submissions`;
    await c.subscribeResource({ uri: uriA });
    await post(formA, { email: 'new@example.com', message: `arrived over ${mode}` });
    await until(`resources/updated for ${uriA}`, async () => updated.includes(uriA), 20_000);

    await c.subscribeResource({ uri: uriC });
    await c.unsubscribeResource({ uri: uriA });
    const before = updated.filter((u) => u === uriA).length;
    // A is posted before C and would be polled first: once C's notification is here, A's would be too.
    await post(formA, { email: 'later@example.com', message: 'after unsubscribe' });
    await post(formC, { email: 'c@example.com', message: 'for careers' });
    await until(`resources/updated for ${uriC}`, async () => updated.includes(uriC), 20_000);
    expect(updated.filter((u) => u === uriA).length).toBe(before);
    await c.unsubscribeResource({ uri: uriC });

    const wrong = await c.subscribeResource({ uri: 'formsvc://llms.txt' }).catch((e) => e);
    expect(wrong).toBeInstanceOf(McpError);
    expect(wrong.message).toContain('formsvc://forms/{id}/submissions');
    const theirs = await connect(mode, t, base, stranger);
    cleanups.push(() => theirs.close());
    const refused = await theirs.subscribeResource({ uri: uriA }).catch((e) => e);
    expect(refused.code).toBe(-32002);
  }, 60_000);
});

describe('MCP sessions on /mcp', () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  };
  const list = { jsonrpc: '2.0', id: 2, method: 'resources/list' };

  it('starts a session on initialize, keeps it to its key, ends it with DELETE; stateless posts still work', async () => {
    const started = await t.request('POST', '/mcp', { key: read, json: init });
    expect(started.status).toBe(200);
    const sid = started.headers.get('mcp-session-id');
    expect(sid).toBeTruthy();
    expect(started.json.result.capabilities.resources.subscribe).toBe(true);
    const headers = { 'mcp-session-id': sid!, 'mcp-protocol-version': '2025-06-18' };

    const inSession = await t.request('POST', '/mcp', { key: read, json: list, headers });
    expect(inSession.status).toBe(200);
    expect(inSession.json.result.resources.map((r: any) => r.uri)).toContain(`formsvc://forms/${formA}`);

    const otherKey = await t.request('POST', '/mcp', { key: manage, json: list, headers });
    expect(otherKey.status).toBe(403);
    expect(otherKey.json.error.hint).toContain('initialize');

    const stateless = await t.request('POST', '/mcp', { key: read, json: list });
    expect(stateless.status).toBe(200);
    expect(stateless.headers.get('mcp-session-id')).toBeNull();
    // A stateless request cannot be told of updates: no subscribe there.
    const sub = await t.request('POST', '/mcp', {
      key: read,
      json: {
        jsonrpc: '2.0',
        id: 3,
        method: 'resources/subscribe',
        params: { uri: `formsvc://forms/${formA}/submissions` },
      },
    });
    expect(sub.json.error.code).toBe(-32601);

    const ended = await t.request('DELETE', '/mcp', { key: read, headers });
    expect(ended.status).toBe(200);
    const gone = await t.request('POST', '/mcp', { key: read, json: list, headers });
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe(-32001);
    const unknown = await t.request('GET', '/mcp', { key: read, headers: { 'mcp-session-id': 'nope' } });
    expect(unknown.status).toBe(404);
    const noId = await t.request('DELETE', '/mcp', { key: read });
    expect(noId.status).toBe(400);
    expect(noId.json.error.hint).toContain('Mcp-Session-Id');
  });
});
