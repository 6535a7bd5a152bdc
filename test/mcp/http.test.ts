import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';

let t: TestEnv;
let manage: string;
let read: string;
const open: Client[] = [];

beforeAll(async () => {
  t = await startTestApp();
  const first = await t.onboard();
  manage = first.key;
  read = (await t.onboard(first.email, { scopes: ['read'], key_name: 'reader' })).key;
});
afterAll(async () => {
  for (const c of open) await c.close().catch(() => {});
  await t?.close();
});

/** An SDK client speaking streamable HTTP to the in-process app's POST /mcp (POST /mcp/public without a key). */
async function connect(key?: string) {
  const url = key ? 'http://127.0.0.1:8787/mcp' : 'http://127.0.0.1:8787/mcp/public';
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: (url, init) => Promise.resolve(t.app.request(String(url), init)),
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
  });
  const client = new Client({ name: 'mcp-http-test', version: '0.0.0' });
  await client.connect(transport);
  open.push(client);
  return client;
}

const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name);

describe('MCP over streamable HTTP at POST /mcp', () => {
  it('lists only the tools the key’s scopes allow', async () => {
    const all = await names(await connect(manage));
    expect(all).toEqual(expect.arrayContaining(['forms_create', 'forms_list', 'quickstart_and_verify', 'me_get']));
    expect(all).not.toContain('api_keys_create'); // session-only

    const reader = await names(await connect(read));
    expect(reader).toEqual(expect.arrayContaining(['forms_list', 'deliveries_get', 'me_get']));
    for (const n of ['forms_create', 'forms_delete', 'deliveries_retry', 'quickstart_and_verify']) {
      expect(reader).not.toContain(n);
    }

    const anonymous = await names(await connect());
    expect(anonymous).toEqual(expect.arrayContaining(['auth_request_code', 'auth_verify_code', 'sandboxes_create']));
    expect(anonymous).not.toContain('forms_list');
  });

  it('calls a tool through the API: structured content plus a text summary', async () => {
    const c = await connect(manage);
    const created: any = await c.callTool({ name: 'forms_create', arguments: { name: 'Contact', project: 'site' } });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent.id).toMatch(/^fm_/);
    expect(created.content[0].text).toContain(created.structuredContent.id);

    const got: any = await c.callTool({ name: 'forms_get', arguments: { id: created.structuredContent.id } });
    expect(got.structuredContent).toMatchObject({ id: created.structuredContent.id, name: 'Contact' });

    const listed: any = await (await connect(read)).callTool({ name: 'forms_list', arguments: { limit: 5 } });
    expect(listed.structuredContent.data.map((f: any) => f.id)).toContain(created.structuredContent.id);
  });

  it('forms_export answers the first rows and the download command, never the whole export', async () => {
    const c = await connect(read);
    const form = await t.api('POST', '/v1/forms', manage, { json: { name: 'Export me' } });
    for (let i = 0; i < 8; i += 1) {
      expect(
        (await t.request('POST', `/s/${form.json.id}`, { json: { n: i, note: i % 2 ? 'odd' : 'even' } })).status,
      ).toBe(200);
    }
    const r: any = await c.callTool({ name: 'forms_export', arguments: { id: form.json.id, format: 'csv', q: 'odd' } });
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent;
    expect(out.first_rows).toHaveLength(4);
    expect(out.first_rows.every((s: any) => s.data.note === 'odd')).toBe(true);
    expect(out.download.cli).toBe(`formsvc forms export ${form.json.id} --format csv --q odd > ${form.json.id}.csv`);
    expect(out.download.url).toBe(`http://127.0.0.1:8787/v1/forms/${form.json.id}/submissions/export?format=csv&q=odd`);
    expect(r.content[0].text).toContain(out.download.cli);
    const all: any = await c.callTool({ name: 'forms_export', arguments: { id: form.json.id, format: 'ndjson' } });
    expect(all.structuredContent.first_rows).toHaveLength(5);
    expect(all.structuredContent.more).toBe(true);
    const missing: any = await c.callTool({ name: 'forms_export', arguments: { id: 'fm_nothing', format: 'csv' } });
    expect(missing.isError).toBe(true);
    expect(missing._meta['formsvc/error'].error.code).toBe('not_found');
  });

  it('answers API errors as isError results with the code, message and hint', async () => {
    const c = await connect(manage);
    const missing: any = await c.callTool({ name: 'deliveries_get', arguments: { id: 'dl_nothing' } });
    expect(missing.isError).toBe(true);
    expect(missing._meta['formsvc/error'].error.code).toBe('not_found');
    expect(missing._meta['formsvc/error'].error.hint).toBeTruthy();
    expect(missing.content[0].text).toMatch(/^not_found: /);
    expect(missing.content[0].text).toContain('Hint: ');

    const invalid: any = await c.callTool({ name: 'forms_create', arguments: { name: '' } });
    expect(invalid.isError).toBe(true);
    expect(invalid._meta['formsvc/error'].error.code).toBe('validation_failed');

    const denied: any = await (await connect(read)).callTool({ name: 'forms_create', arguments: { name: 'Nope' } });
    expect(denied.isError).toBe(true);
    expect(denied._meta['formsvc/error'].error.code).toBe('forbidden');
  });

  it('answers a keyless POST /mcp 401 with the OAuth challenge (changed: onboarding moved to /mcp/public)', async () => {
    const r = await t.request('POST', '/mcp', {
      json: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(r.status).toBe(401);
    expect(r.json.error).toMatchObject({ code: 'unauthorized' });
    expect(r.json.error.hint).toContain('/mcp/public');
    expect(r.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource/mcp"',
    );
  });

  it('lets a caller without a key use the onboarding tools at /mcp/public: a sandbox, a submission, its read-back', async () => {
    const c = await connect();
    const locked: any = await c.callTool({ name: 'forms_list', arguments: {} });
    expect(locked.isError).toBe(true);
    expect(locked._meta['formsvc/error'].error).toMatchObject({ code: 'unauthorized' });
    expect(locked._meta['formsvc/error'].error.hint).toContain('auth_request_code');

    const made: any = await c.callTool({ name: 'sandboxes_create', arguments: { name: 'Try it' } });
    expect(made.isError, made.content[0].text).toBeFalsy();
    const { sandbox, sandbox_token } = made.structuredContent;
    const formId = new URL(sandbox.submit_url).pathname.split('/').pop();
    const sent: any = await c.callTool({ name: 'intake_submit', arguments: { formId, email: 'ada@example.com' } });
    expect(sent.isError, sent.content[0].text).toBeFalsy();
    expect(sent.structuredContent.ok).toBe(true);
    const seen: any = await c.callTool({ name: 'sandboxes_read', arguments: { id: sandbox.id, sandbox_token } });
    expect(seen.isError, seen.content[0].text).toBeFalsy();
    expect(seen.structuredContent.submissions.map((s: any) => s.data.email)).toEqual(['ada@example.com']);
  });

  it('runs quickstart_and_verify in process, posting the test as the allowed origin', async () => {
    await t.startWorker();
    const c = await connect(manage);
    const r: any = await c.callTool(
      {
        name: 'quickstart_and_verify',
        arguments: { name: 'Site form', origin: 'https://www.example.com', notify_email: 'ops@example.com' },
      },
      undefined,
      { timeout: 60_000 },
    );
    expect(r.isError, r.content[0].text).toBeFalsy();
    expect(r.structuredContent.submission.status).toBe('received');
    expect(r.structuredContent.ok, r.content[0].text).toBe(true);
    expect(r.structuredContent.deliveries.map((d: any) => d.status)).toEqual(['sent']);
    expect(r.content[0].text).toMatch(/^Verified: /);
  });

  it('quickstart_and_verify takes slack_url and discord_url and proves both deliveries', async () => {
    const slack = await startReceiver(() => ({ status: 200, body: 'ok' }));
    const discord = await startReceiver(() => ({ status: 204, body: '' }));
    try {
      const c = await connect(manage);
      const r: any = await c.callTool(
        {
          name: 'quickstart_and_verify',
          arguments: {
            name: 'Chat form',
            notify_email: 'ops@example.com',
            slack_url: slack.url,
            discord_url: discord.url,
          },
        },
        undefined,
        { timeout: 60_000 },
      );
      expect(r.isError, r.content[0].text).toBeFalsy();
      expect(r.structuredContent.ok, r.content[0].text).toBe(true);
      expect(r.structuredContent.destinations.map((d: any) => d.type)).toEqual(['email', 'slack', 'discord']);
      expect(r.structuredContent.warnings).toHaveLength(2);
      expect(slack.requests[0].json.text).toContain('Chat form');
      expect(discord.requests[0].json.embeds[0].title).toBe('Chat form');
    } finally {
      await slack.close();
      await discord.close();
    }
  });

  it('serves llms.txt and openapi.json as resources', async () => {
    const c = await connect(read);
    const uris = (await c.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(['formsvc://llms.txt', 'formsvc://openapi.json']));
    const llms: any = await c.readResource({ uri: 'formsvc://llms.txt' });
    expect(llms.contents[0].text).toContain('# formsvc');
    const doc: any = await c.readResource({ uri: 'formsvc://openapi.json' });
    expect(JSON.parse(doc.contents[0].text).paths['/mcp'].post.operationId).toBe('mcp_call');
  });

  it('refuses an invalid key with 401, answers plain JSON-RPC posts; GET is 401 without credentials and 405 without a session', async () => {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const bad = await t.request('POST', '/mcp', { key: 'svc_live_nope', json: rpc });
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe('unauthorized');

    const plain = await t.request('POST', '/mcp', { key: read, json: rpc });
    expect(plain.status).toBe(200);
    expect(plain.json.result.tools.length).toBeGreaterThan(10);

    const bare = await t.request('GET', '/mcp');
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toContain('resource_metadata=');
    const get = await t.request('GET', '/mcp', { key: read });
    expect(get.status).toBe(405);
    expect(get.json.error.hint).toContain('initialize');
  });

  it('refuses a Host or an Origin that is not the service’s own (DNS rebinding): 403 with a hint', async () => {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const call = (headers: Record<string, string>, env = t) =>
      env.request('POST', '/mcp', { key: read, json: rpc, headers });
    for (const headers of <Record<string, string>[]>[
      { host: 'rebind.evil.example:8787' },
      { host: '127.0.0.1:8787', origin: 'http://rebind.evil.example:8787' },
      { host: '127.0.0.1:8787', origin: 'null' },
      { origin: 'https://agent.example' },
    ]) {
      const r = await call(headers);
      expect(r.status, JSON.stringify(headers)).toBe(403);
      expect(r.json.error.code).toBe('forbidden');
      expect(r.json.error.hint).toContain('MCP_ALLOWED_ORIGINS');
    }
    // The service's own names and origins: PUBLIC_BASE_URL, and loopback when it listens there.
    for (const headers of <Record<string, string>[]>[
      {},
      { host: '127.0.0.1:8787' },
      { host: 'localhost:8787', origin: 'http://localhost:8787' },
      { host: '[::1]:8787' },
      { origin: 'http://127.0.0.1:8787' },
    ]) {
      const r = await call(headers);
      expect(r.status, JSON.stringify(headers)).toBe(200);
    }
    // MCP_ALLOWED_ORIGINS adds origins (and their hosts).
    const wide = await startTestApp({ MCP_ALLOWED_ORIGINS: 'https://agent.example, https://tools.example:8443' });
    try {
      const k = (await wide.onboard()).key;
      const ok = (headers: Record<string, string>) =>
        wide.request('POST', '/mcp', { key: k, json: rpc, headers }).then((r) => r.status);
      expect(await ok({ origin: 'https://agent.example' })).toBe(200);
      expect(await ok({ host: 'agent.example', origin: 'https://tools.example:8443' })).toBe(200);
      expect(await ok({ origin: 'https://agent.example.evil' })).toBe(403);
      expect(await ok({ host: 'other.example' })).toBe(403);
    } finally {
      await wide.close();
    }
  });
});
