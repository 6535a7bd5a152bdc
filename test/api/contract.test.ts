import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractText, SNAPSHOT_BASE_URL, SNAPSHOT_PATH } from '../../scripts/openapi.js';
import { operations } from '../../shared/contracts/index.js';
import { SECURITY_SCHEMES } from '../../shared/contracts/security.js';
import { ERROR_CODES } from '../../shared/errors.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { VALID_BODIES } from '../helpers/bodies.js';

let t: TestEnv;
let doc: any;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request('GET', '/openapi.json')).json;
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'];

/** Served on purpose outside the contract, each for a reason. */
const OAUTH =
  'OAuth 2.1 (docs/authentication.md): RFC-defined endpoints with RFC error shapes; the contract declares the OAuth2 scheme';
const UNDOCUMENTED: Record<string, string> = {
  'GET /.well-known/oauth-protected-resource': OAUTH,
  'GET /.well-known/oauth-protected-resource/mcp': OAUTH,
  'GET /.well-known/oauth-protected-resource/v1': OAUTH,
  'GET /.well-known/oauth-authorization-server': OAUTH,
  'POST /oauth/register': OAUTH,
  'POST /oauth/token': OAUTH,
  'POST /oauth/revoke': OAUTH,
};

/**
 * The people's HTML pages (the dashboard, hosted form pages, double opt-in links) and the files they load (/assets: the
 * proof-of-work widget): not API operations, not in /openapi.json.
 */
const PAGES = /^\/(app|f|c|assets)(\/|$)/;

/** Error answers that are not the envelope, on purpose. */
const NOT_ENVELOPED: Record<string, string> = {
  'system_health 503': 'load balancers read {ok: false}; the body says the database is not reachable',
  'system_ready 503': 'load balancers read {ok: false, reason}: a readiness probe, not an error of the caller',
  // The MCP streamable HTTP transport's own answer to an unknown session: SDK clients act on it (initialize again).
  'mcp_call 404': 'the transport’s JSON-RPC "Session not found" (-32001) for an unknown Mcp-Session-Id',
  'mcp_stream 404': 'the transport’s JSON-RPC "Session not found" (-32001) for an unknown Mcp-Session-Id',
  'mcp_end 404': 'the transport’s JSON-RPC "Session not found" (-32001) for an unknown Mcp-Session-Id',
};

describe('/openapi.json is the contract of what is mounted', () => {
  it('is OpenAPI 3.1 with version 0.1.0', () => {
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.info.version).toBe('0.1.0');
  });

  it('documents every mounted route, and every documented operation is mounted', () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const m of METHODS) if (item[m]) documented.add(`${m.toUpperCase()} ${path}`);
    }
    const mounted = new Set<string>();
    for (const r of t.app.routes) {
      if (r.method === 'ALL' || PAGES.test(r.path)) continue; // middleware, pages
      mounted.add(`${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    }
    const missingFromDoc = [...mounted].filter((k) => !documented.has(k) && !UNDOCUMENTED[k]);
    const notMounted = [...documented].filter((k) => !mounted.has(k));
    expect(missingFromDoc).toEqual([]);
    expect(notMounted).toEqual([]);
    for (const k of Object.keys(UNDOCUMENTED)) expect(mounted.has(k), k).toBe(true);
  });

  it('holds every registry operation, each with a unique operationId, a summary and enveloped errors', () => {
    const ids = new Set<string>();
    for (const op of operations) {
      const item = doc.paths[op.path]?.[op.method];
      expect(item, `${op.method} ${op.path}`).toBeDefined();
      expect(item.operationId).toMatch(/^[a-z]+(_[a-z]+)+$/);
      expect(ids.has(item.operationId), item.operationId).toBe(false);
      ids.add(item.operationId);
      expect(item.summary, item.operationId).toBeTruthy();
      for (const [status, res] of Object.entries<any>(item.responses)) {
        if (Number(status) >= 400 && !NOT_ENVELOPED[`${item.operationId} ${status}`]) {
          expect(res.content['application/json'].schema.$ref, `${item.operationId} ${status}`).toBe(
            '#/components/schemas/Error',
          );
        }
      }
    }
  });
});

/** Every operation of the served document, with its operationId. */
function documentOperations(d: any): { key: string; method: string; path: string; item: any }[] {
  const out = [];
  for (const [path, pathItem] of Object.entries<any>(d.paths)) {
    for (const method of METHODS) {
      if (pathItem[method]) out.push({ key: `${method.toUpperCase()} ${path}`, method, path, item: pathItem[method] });
    }
  }
  return out;
}

/** A parameter, following a $ref into components.parameters. */
const resolveParam = (p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p);

describe('/openapi.json is a contract standard tools accept', () => {
  it('matches the committed snapshot (regenerate with `npm run openapi:snapshot`)', () => {
    const live = contractText();
    const committed = fs.existsSync(SNAPSHOT_PATH) ? fs.readFileSync(SNAPSHOT_PATH, 'utf8') : '';
    expect(
      live === committed,
      'test/api/openapi.snapshot.json differs from the contract: run `npm run openapi:snapshot` and commit it',
    ).toBe(true);
    // What the server serves is that same document, with its own base URL.
    const served = JSON.parse(live.replaceAll(SNAPSHOT_BASE_URL, 'http://127.0.0.1:8787'));
    expect(doc).toEqual(served);
  });

  it('names each operation’s scope as the x-scope extension, and the credentials it accepts as declared schemes', () => {
    const schemes = Object.keys(doc.components.securitySchemes);
    expect(schemes.sort()).toEqual(Object.keys(SECURITY_SCHEMES).sort());
    for (const { key, item } of documentOperations(doc)) {
      expect(item.scope, key).toBeUndefined();
      expect(['public', 'submit', 'read', 'manage', 'session'], key).toContain(item['x-scope']);
      expect(Array.isArray(item.security), key).toBe(true);
      for (const req of item.security) for (const name of Object.keys(req)) expect(schemes, key).toContain(name);
      const needsCredentials = item.security.length > 0 && item.security.every((r: object) => Object.keys(r).length);
      // Credentials are needed exactly where the server checks them (the sandbox token is checked by its service).
      if (item['x-scope'] !== 'public') expect(needsCredentials, key).toBe(true);
      if (needsCredentials) expect(item.responses['401'], `${key} declares 401`).toBeDefined();
      if (item['x-scope'] === 'session') expect(item.security, key).toEqual([{ Session: [] }]);
    }
  });

  it('gives every operation one described tag and a description', () => {
    const tags = new Map<string, string>(doc.tags.map((t: any) => [t.name, t.description]));
    const used = new Set<string>();
    for (const { key, item } of documentOperations(doc)) {
      expect(item.tags, key).toHaveLength(1);
      expect(tags.get(item.tags[0]), `${key}: tag ${item.tags[0]} is described`).toBeTruthy();
      used.add(item.tags[0]);
      expect(item.description, key).toMatch(/Credentials: /);
    }
    expect([...tags.keys()].filter((t) => !used.has(t))).toEqual([]);
    for (const key of ['GET /openapi.json', 'GET /llms.txt']) {
      expect(documentOperations(doc).find((o) => o.key === key)?.item.summary, key).toBeTruthy();
    }
  });

  it('declares the headers of its answers: Location on 303, Retry-After on 429 and 503, Content-Disposition on downloads', () => {
    for (const { key, item } of documentOperations(doc)) {
      for (const [status, res] of Object.entries<any>(item.responses)) {
        if (status === '303') expect(res.headers?.Location?.required, `${key} 303`).toBe(true);
        if ((status === '429' || status === '503') && !NOT_ENVELOPED[`${item.operationId} ${status}`]) {
          expect(res.headers?.['Retry-After'], `${key} ${status}`).toBeDefined();
        }
      }
    }
    const download = doc.paths['/v1/submissions/{id}/attachments/{fileId}'].get.responses['200'];
    expect(download.headers['Content-Disposition'].required).toBe(true);
    expect(Object.keys(download.content)).toContain('*/*');
  });

  it('declares Idempotency-Key on every POST under /v1 and on the intake, but those never replayed', () => {
    const posts = documentOperations(doc).filter(
      (o) => o.method === 'post' && (o.path.startsWith('/v1/') || o.path === '/s/{formId}'),
    );
    expect(posts.length).toBeGreaterThan(20);
    const never: string[] = [];
    for (const { key, item } of posts) {
      const names = (item.parameters ?? []).map(resolveParam).filter((p: any) => p.in === 'header');
      const declared = names.some((p: any) => p.name.toLowerCase() === 'idempotency-key');
      // An operation on the caller's own credentials runs every time: it takes no key (issue 28, point 7).
      if (item['x-never-replayed']) never.push(key);
      expect(declared, key).toBe(!item['x-never-replayed']);
    }
    expect(never.sort()).toEqual(['POST /v1/auth/sign-out', 'POST /v1/organizations/{id}/switch']);
  });

  it('answers 401 without credentials on every operation whose contract requires them', async () => {
    for (const { key, method, path, item } of documentOperations(doc)) {
      const needsCredentials = item.security.length > 0 && item.security.every((r: object) => Object.keys(r).length);
      if (!needsCredentials) continue;
      const r = await t.request(method.toUpperCase(), path.replace(/\{[^}]+\}/g, 'x_1'));
      expect(r.status, key).toBe(401);
    }
  });

  it('refuses an API key on every operation whose contract does not accept one', async () => {
    const key = (await t.onboard()).key;
    const refused: string[] = [];
    for (const { key: op, method, path, item } of documentOperations(doc)) {
      const needsCredentials = item.security.length > 0 && item.security.every((r: object) => Object.keys(r).length);
      if (!needsCredentials || item.security.some((r: object) => 'ApiKey' in r)) continue;
      const r = await t.api(
        method.toUpperCase(),
        path.replace(/\{[^}]+\}/g, 'x_1'),
        key,
        method === 'get' ? {} : { json: VALID_BODIES[item.operationId] ?? {} },
      );
      expect([401, 403], `${op} answered ${r.status}`).toContain(r.status);
      refused.push(op);
    }
    expect(refused).toEqual(
      expect.arrayContaining([
        'POST /v1/api-keys',
        'POST /v1/invitations/{id}/accept',
        'POST /v1/organizations/{id}/switch',
        'PATCH /v1/members/{id}',
        'DELETE /v1/members/{id}',
      ]),
    );
  });
});

describe('errors', () => {
  it('serves /docs/errors with an anchor per code, and envelopes link to it', async () => {
    const page = await t.request('GET', '/docs/errors');
    expect(page.status).toBe(200);
    for (const code of Object.keys(ERROR_CODES)) expect(page.text).toContain(`id="${code}"`);
    const r = await t.request('GET', '/v1/nothing-here');
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'not_found', docs: 'http://127.0.0.1:8787/docs/errors#not_found' });
    expect(r.json.error.hint).toBeTruthy();
  });

  it('answers a wrong method with 405 and Allow, malformed JSON with 400, an oversized body with 413 and Connection: close', async () => {
    const key = (await t.onboard()).key;
    const wrong = await t.api('PUT', '/v1/projects', key);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('GET');
    expect(wrong.json.error.code).toBe('method_not_allowed');
    const bad = await t.api('POST', '/v1/projects', key, {
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.hint).toBeTruthy();
    const big = await t.api('POST', '/v1/projects', key, {
      body: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe('payload_too_large');
    expect(big.headers.get('connection')).toBe('close');
  });
});
