import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_META } from '../../mcp/results.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { freePort } from '../helpers/process.js';

/**
 * Typed tools (issue 33 part 1): every tool lists an outputSchema over stdio and over HTTP, one real
 * call of every read tool returns structuredContent that a JSON Schema validator accepts, a failing
 * tool reaches the SDK's own client as an isError result with the hint (not as an exception), and
 * the MCP Inspector's CLI lists what the stdio server serves. The app runs in process, served on a
 * loopback port so that the stdio server (a child process, as an agent host starts it) reaches it.
 */
const OPERATOR = 'typed-ops@example.com';
const cleanups: (() => unknown)[] = [];
let t: TestEnv;
let base: string;
let key: string;
let tmp: string;
/** The arguments of one real call of each read tool, made from the data beforeAll creates. */
let readArgs: Record<string, Record<string, unknown>>;
/** A text attachment: the client decodes text/*, the tool answers its bytes all the same. */
let textFile: Record<string, string>;

/** Read tools that cannot be called meaningfully here, each with the reason. None today. */
const UNCALLED: Record<string, string> = {};

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);

async function ok(r: { status: number; text: string; json: any }, status = [200, 201]) {
  expect(status, r.text).toContain(r.status);
  return r.json;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-typed-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await startTestApp({ PUBLIC_BASE_URL: base, ADMIN_EMAILS: OPERATOR });
  cleanups.push(() => t.close());
  const server = serve({ fetch: t.app.fetch, port, hostname: '127.0.0.1' });
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  // The operator's key: the admin read tools (plan grants, growth) answer it too.
  key = (await t.onboard(OPERATOR)).key;
  const api = (method: string, p: string, json?: unknown) => t.api(method, p, key, json ? { json } : {});

  const form = await ok(await api('POST', '/v1/forms', { name: 'Typed', project: 'typed' }));
  await ok(
    await api('POST', `/v1/forms/${form.id}/schema`, {
      json_schema: { type: 'object', properties: { email: { type: 'string' }, message: { type: 'string' } } },
    }),
  );
  await ok(await api('PATCH', `/v1/forms/${form.id}`, { schema_mode: 'observe' }));
  // Nothing is delivered (no worker runs): the destinations and the webhook only need to exist.
  const dest = await ok(
    await api('POST', '/v1/destinations', {
      type: 'webhook',
      name: 'hook',
      config: { url: 'https://hooks.example.com/x' },
    }),
  );
  const route = await ok(await api('POST', '/v1/routes', { form_id: form.id, destination_id: dest.id }));
  const stream = await ok(
    await api('POST', '/v1/streams', {
      name: 'Leads',
      slug: 'leads',
      schema: { json_schema: { type: 'object', properties: { email: { type: 'string' } } } },
      sources: [{ form_id: form.id, mapping: { email: { from: 'email' } } }],
    }),
  );
  const hook = await ok(
    await api('POST', '/v1/webhooks', { url: 'https://hooks.example.com/system', events: ['delivery.dead'] }),
  );
  const invitation = await ok(await api('POST', '/v1/invitations', { email: 'new@example.com', role: 'member' }));

  // A submission with a file and an undeclared field (drift on an observed schema).
  const body = new FormData();
  body.set('email', 'ada@example.com');
  body.set('message', 'hello');
  body.set('phone', '+44 20 7946 0000');
  body.set('doc', new Blob([Buffer.from([0, 1, 2, 250, 251, 252])], { type: 'application/octet-stream' }), 'a.bin');
  body.set('note', new Blob(['héllo, typed'], { type: 'text/plain' }), 'note.txt');
  const sent = await t.request('POST', `/s/${form.id}`, { body, headers: { accept: 'application/json' } });
  expect(sent.status, sent.text).toBe(200);
  const submission = await ok(await api('GET', `/v1/submissions/${sent.json.submission_id}`));
  expect(submission.attachments).toHaveLength(2);
  const deliveries = await ok(await api('GET', `/v1/deliveries?submission_id=${submission.id}`));
  expect(deliveries.data.length).toBeGreaterThan(0);
  const drift = await ok(await api('GET', `/v1/forms/${form.id}/drift`));
  expect(drift.data.map((d: any) => d.field)).toContain('phone');

  const sandbox = await ok(
    await t.request('POST', '/v1/public/sandboxes', {
      json: { name: 'Try' },
      headers: { 'idempotency-key': crypto.randomUUID() },
    }),
  );
  const keys = await ok(await api('GET', '/v1/api-keys'));

  textFile = {
    id: submission.id,
    fileId: submission.attachments.find((a: { filename: string }) => a.filename === 'note.txt').id,
  };
  readArgs = {
    auth_providers: {},
    api_keys_list: {},
    api_keys_get: { id: keys.data[0].id },
    me_get: {},
    projects_list: {},
    projects_get: { id: form.project_id },
    forms_list: {},
    forms_get: { id: form.id },
    forms_embed: { id: form.id },
    destinations_list: {},
    destinations_get: { id: dest.id },
    routes_list: {},
    routes_get: { id: route.id },
    submissions_list: {},
    forms_submissions: { id: form.id },
    submissions_get: { id: submission.id },
    submissions_explain: { id: submission.id },
    forms_export: { id: form.id, format: 'csv' },
    submissions_attachment: {
      id: submission.id,
      fileId: submission.attachments.find((a: { filename: string }) => a.filename === 'a.bin').id,
    },
    deliveries_list: { submission_id: submission.id },
    deliveries_get: { id: deliveries.data[0].id },
    events_list: {},
    webhooks_list: {},
    webhooks_get: { id: hook.id },
    webhooks_deliveries: { id: hook.id },
    schemas_get: { id: form.id },
    schemas_versions: { id: form.id },
    drift_list: { id: form.id },
    streams_list: {},
    streams_get: { id: stream.id },
    streams_schema_get: { id: stream.id },
    streams_sources_list: { id: stream.id },
    streams_preview: { id: stream.id },
    plan_grants_list: {},
    admin_growth_get: {},
    sandboxes_read: { id: sandbox.sandbox.id, sandbox_token: sandbox.sandbox_token },
    organizations_list: {},
    members_list: {},
    invitations_list: {},
    invitations_get: { id: invitation.id },
    spam_get: {},
  };
}, 120_000);

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** `formsvc mcp` over stdio with the key in its environment, as an agent host starts it. */
function stdioEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('FORMSVC_')) env[k] = v;
  return { ...env, FORMSVC_BASE_URL: base, FORMSVC_API_KEY: key, FORMSVC_CONFIG: path.join(tmp, 'none.json') };
}

async function connect(kind: 'stdio' | 'http'): Promise<Client> {
  const transport =
    kind === 'stdio'
      ? new StdioClientTransport({
          command: process.execPath,
          args: ['bin/formsvc.js', 'mcp'],
          cwd: process.cwd(),
          env: stdioEnv(),
          stderr: 'ignore',
        })
      : // POST /mcp in process, as test/mcp/http.test.ts connects (the stdio server uses the loopback port).
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          fetch: (url, init) => Promise.resolve(t.app.request(String(url), init)),
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        });
  const client = new Client({ name: `typed-${kind}`, version: '0.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

describe.each(['stdio', 'http'] as const)('typed tools over %s', (kind) => {
  let client: Client;
  let tools: Tool[];

  beforeAll(async () => {
    client = await connect(kind);
    // listTools also makes the SDK client validate every later callTool's structuredContent.
    tools = (await client.listTools()).tools;
  }, 60_000);

  it('lists an object outputSchema on every tool', () => {
    expect(tools.length).toBeGreaterThan(60);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(() => ajv.compile(tool.outputSchema!), tool.name).not.toThrow();
    }
    const revoke = tools.find((x) => x.name === 'api_keys_revoke')!;
    expect(revoke.outputSchema?.required).toEqual(['status']); // a 204 is {status: 204}
    expect(tools.find((x) => x.name === 'forms_export')!.outputSchema?.required).toEqual(
      expect.arrayContaining(['first_rows', 'more', 'download']),
    );
    expect(tools.find((x) => x.name === 'quickstart_and_verify')!.outputSchema?.required).toEqual(
      expect.arrayContaining(['ok', 'form', 'deliveries', 'next']),
    );
  });

  it('calls every read tool once and its structuredContent validates against its outputSchema', {
    timeout: 120_000,
  }, async () => {
    const reads = tools.filter((x) => x.annotations?.readOnlyHint);
    expect(reads.length).toBeGreaterThan(30);
    const missing = reads.map((x) => x.name).filter((n) => !(n in readArgs) && !(n in UNCALLED));
    expect(missing, 'a read tool without a call here: add its arguments, or to UNCALLED with the reason').toEqual([]);
    for (const tool of reads) {
      if (tool.name in UNCALLED) continue;
      const r: any = await client
        .callTool({ name: tool.name, arguments: readArgs[tool.name] })
        .catch((err) => expect.fail(`${tool.name}: ${err}`));
      expect(r.isError, `${tool.name}: ${r.content?.[0]?.text}`).toBeFalsy();
      expect(r.structuredContent, tool.name).toBeTypeOf('object');
      const validate = ajv.compile(tool.outputSchema!);
      expect(validate(r.structuredContent), `${tool.name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(r.content[0].type).toBe('text');
    }
  });

  it('answers real data in the structured results', async () => {
    const got: any = await client.callTool({ name: 'submissions_get', arguments: readArgs.submissions_get });
    expect(got.structuredContent).toMatchObject({
      id: readArgs.submissions_get.id,
      data: { email: 'ada@example.com' },
    });
    const file: any = await client.callTool({
      name: 'submissions_attachment',
      arguments: readArgs.submissions_attachment,
    });
    expect(file.structuredContent).toMatchObject({ mime_type: 'application/octet-stream', size: 6 });
    expect(Buffer.from(file.content[1].resource.blob, 'base64')).toEqual(Buffer.from([0, 1, 2, 250, 251, 252]));
    const text: any = await client.callTool({ name: 'submissions_attachment', arguments: textFile });
    expect(text.structuredContent).toMatchObject({ mime_type: 'text/plain', size: Buffer.byteLength('héllo, typed') });
    expect(Buffer.from(text.content[1].resource.blob, 'base64').toString()).toBe('héllo, typed');
    const drift: any = await client.callTool({ name: 'drift_list', arguments: readArgs.drift_list });
    expect(drift.structuredContent.data.map((d: any) => d.field)).toContain('phone');
  });

  it('validates write tools too: a create, and a delete answered {status: 204}', async () => {
    const created: any = await client.callTool({ name: 'forms_create', arguments: { name: `Scratch ${kind}` } });
    expect(created.isError, created.content[0].text).toBeFalsy();
    const schemaOf = (name: string) => ajv.compile(tools.find((x) => x.name === name)!.outputSchema!);
    expect(schemaOf('forms_create')(created.structuredContent)).toBe(true);
    const deleted: any = await client.callTool({
      name: 'forms_delete',
      arguments: { id: created.structuredContent.id },
    });
    expect(deleted.isError, deleted.content[0].text).toBeFalsy();
    expect(deleted.structuredContent).toEqual({ status: 204 });
    expect(schemaOf('forms_delete')(deleted.structuredContent)).toBe(true);
  });

  it('gives the SDK client a failing tool as an isError result with the hint, not an exception', async () => {
    const forms = tools.find((x) => x.name === 'forms_get')!;
    const r: any = await client.callTool({ name: 'forms_get', arguments: { id: 'fm_01h455vb4pex5vsknk084sn02q' } });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    const envelope = r._meta[ERROR_META];
    expect(envelope.status).toBe(404);
    expect(envelope.error.code).toBe('not_found');
    expect(envelope.error.hint).toBeTruthy();
    expect(r.content[0].text).toContain(`Hint: ${envelope.error.hint}`);
    expect(JSON.parse(r.content[1].text)).toEqual(envelope);
    // The envelope as structuredContent would not match the success schema: the SDK client would throw.
    expect(ajv.compile(forms.outputSchema!)(envelope)).toBe(false);

    const invalid: any = await client.callTool({ name: 'forms_create', arguments: { name: '' } });
    expect(invalid.isError).toBe(true);
    expect(invalid._meta[ERROR_META].error).toMatchObject({ code: 'validation_failed', hint: expect.any(String) });
  });
});

/** `npx @modelcontextprotocol/inspector --cli node bin/formsvc.js mcp --method <m>`: stdout, or the failure. */
function inspector(method: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = ['--no-install', '@modelcontextprotocol/inspector', '--cli', 'node', 'bin/formsvc.js', 'mcp'];
  return new Promise((resolve) => {
    execFile(
      'npx',
      [...args, '--method', method],
      { cwd: process.cwd(), env: stdioEnv(), timeout: 90_000, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
  });
}

describe('the MCP Inspector CLI against the stdio server', () => {
  it('lists the tools, the resources and the prompts', { timeout: 150_000 }, async () => {
    // In CLI mode the Inspector starts the server over stdio and prints the answer: no browser, no proxy.
    const [tools, resources, prompts] = await Promise.all(
      ['tools/list', 'resources/list', 'prompts/list'].map(inspector),
    );
    expect(tools.code, tools.stderr).toBe(0);
    const listed = JSON.parse(tools.stdout).tools as Tool[];
    expect(listed.map((x) => x.name)).toEqual(expect.arrayContaining(['forms_create', 'quickstart_and_verify']));
    expect(listed.every((x) => x.outputSchema?.type === 'object')).toBe(true);

    expect(resources.code, resources.stderr).toBe(0);
    expect(JSON.parse(resources.stdout).resources.map((r: { uri: string }) => r.uri)).toEqual(
      expect.arrayContaining(['formsvc://llms.txt', 'formsvc://openapi.json']),
    );

    // Prompts are another branch's work: a server that has them lists them; one without says so.
    if (prompts.code === 0) expect(Array.isArray(JSON.parse(prompts.stdout).prompts)).toBe(true);
    else expect(`${prompts.stdout}${prompts.stderr}`).toMatch(/Method not found|-32601/);
  });
});
