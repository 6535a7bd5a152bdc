import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/**
 * Regressions found by the bad-input fuzzer (npm run test:fuzz): PostgreSQL stores no NUL and jsonb
 * no unpaired surrogate, so such strings in /v1 bodies were 500s; they are 422 with the field's path.
 */

let t: TestEnv;
let key: string;

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
});
afterAll(() => t.close());

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  t.request('POST', path, {
    body: new TextEncoder().encode(body),
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
  });

describe('strings that cannot be stored, in /v1 bodies', () => {
  it('answers 422 with the path for a NUL in a text column (was 500)', async () => {
    const r = await post('/v1/projects', '{"name":"a\\u0000b"}');
    expect(r.status, r.text).toBe(422);
    expect(r.json.error).toMatchObject({ code: 'validation_failed', details: { issues: [{ path: 'name' }] } });
  });

  it('answers 422 for a NUL or an unpaired surrogate inside a jsonb value (was 500)', async () => {
    const nul = await post(
      '/v1/destinations',
      '{"type":"webhook","name":"w","config":{"url":"https://e.test","secret":"s\\u0000"}}',
    );
    expect(nul.status, nul.text).toBe(422);
    expect(nul.json.error.details.issues[0].path).toBe('config.secret');
    const lone = await post('/v1/forms', '{"name":"f"}');
    const schema = await post(
      `/v1/forms/${lone.json.id}/schema`,
      '{"json_schema":{"type":"object","properties":{"\\ud800":{}}}}',
    );
    expect(schema.status, schema.text).toBe(422);
    expect(schema.json.error.details.issues[0].path).toBe('json_schema.properties.\ud800');
  });

  it('checks credentials first, and keeps an escaped backslash-u text as it is', async () => {
    const anonymous = await t.request('POST', '/v1/projects', {
      body: '{"name":"a\\u0000b"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(anonymous.status).toBe(401);
    const literal = await post('/v1/projects', '{"name":"a\\\\u0000b 🙂"}');
    expect(literal.status, literal.text).toBe(201);
    expect(literal.json.name).toBe('a\\u0000b 🙂');
  });

  it('stores the 422 under an Idempotency-Key like any validation answer', async () => {
    const headers = { 'idempotency-key': 'unstorable-1' };
    const first = await post('/v1/projects', '{"name":"\\u0000"}', headers);
    const again = await post('/v1/projects', '{"name":"\\u0000"}', headers);
    expect([first.status, again.status]).toEqual([422, 422]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});
