import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../shared/contracts/index.js';
import { ERROR_CODES } from '../../shared/errors.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';

let t: TestEnv;
let doc: any;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.request('GET', '/openapi.json')).json;
});
afterAll(() => t.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head'];

/** Served on purpose outside the contract, each for a reason. */
const UNDOCUMENTED: Record<string, string> = {
  'GET /openapi.json': 'the contract itself',
};

/** Error answers that are not the envelope, on purpose. */
const NOT_ENVELOPED: Record<string, string> = {
  'system_health 503': 'load balancers read {ok: false}; the body says the database is not reachable',
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
      if (r.method === 'ALL') continue; // middleware
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
