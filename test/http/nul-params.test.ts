import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDbUnavailable, isUnstorableValue } from '../../server/db/errors.js';
import { operations } from '../../shared/contracts/index.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/**
 * A NUL byte (%00) in a path id or a query value reached the database, which cannot hold one, and
 * answered 500. Every registered operation is walked: each path parameter and each query parameter
 * it declares, with %00, answers 404 or 422 with the envelope.
 */

const OPERATOR = `nul-op-${crypto.randomUUID().slice(0, 6)}@example.com`;
let t: TestEnv;
let key: string;
let cookie: string;

beforeAll(async () => {
  t = await startTestApp({ ADMIN_EMAILS: OPERATOR, BILLING_WEBHOOK_SECRET: 'nul-test-secret' });
  key = (await t.onboard(OPERATOR)).key;
  const before = t.smtp.messages.length;
  await t.request('POST', '/v1/auth/request-code', { json: { email: OPERATOR } });
  const mail = await t.smtp.waitFor((m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(OPERATOR));
  const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
  const signIn = await t.request('POST', '/v1/auth/sign-in', { json: { email: OPERATOR, code } });
  expect(signIn.status, signIn.text).toBe(200);
  cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
});
afterAll(() => t.close());

/** A request to `op` with the credentials its scope needs (a session for session operations). */
function call(op: (typeof operations)[number], path: string) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (op['x-scope'] === 'session') headers.cookie = cookie;
  else if (op['x-scope'] !== 'public') headers.authorization = `Bearer ${key}`;
  const body = op.request?.body ? {} : undefined;
  return t.request(op.method.toUpperCase(), path, { json: body, headers });
}

const fill = (path: string, value: string) => path.replace(/\{[^}]+\}/g, value);

function expectEnvelope(r: { status: number; json: any; text: string }, status: number, what: string) {
  expect(r.status, `${what}: ${r.text}`).toBe(status);
  expect(typeof r.json?.error?.code, what).toBe('string');
  expect(r.json.error.hint, what).toBeTruthy();
}

describe('%00 in path and query parameters', () => {
  const withParams = operations.filter((op) => /\{[^}]+\}/.test(op.path));
  const withQuery = operations.filter((op) => op.request?.query);

  it('walks enough operations to mean something', () => {
    expect(withParams.length).toBeGreaterThan(30);
    expect(withQuery.length).toBeGreaterThan(10);
  });

  it('answers 404 not_found for every operation with %00 in its path parameters', async () => {
    for (const op of withParams) {
      const r = await call(op, fill(op.path, '%00'));
      expectEnvelope(r, 404, `${op.method.toUpperCase()} ${op.path} (${op.operationId})`);
      expect(r.json.error.code).toBe('not_found');
    }
  });

  it('answers 422 naming the parameter for every query parameter an operation declares, set to %00', async () => {
    let walked = 0;
    for (const op of withQuery) {
      const shape = (op.request?.query as unknown as { shape: Record<string, unknown> } | undefined)?.shape ?? {};
      for (const name of Object.keys(shape)) {
        const r = await call(op, `${fill(op.path, 'x_probe')}?${name}=a%00b`);
        expectEnvelope(r, 422, `${op.operationId} ?${name}=a%00b`);
        expect(r.json.error.details.issues).toEqual([{ path: name, message: expect.any(String) }]);
        walked += 1;
      }
    }
    expect(walked).toBeGreaterThan(30);
  });

  it('checks credentials first', async () => {
    const r = await t.request('GET', '/v1/forms/%00');
    expect(r.status).toBe(401);
  });

  it('keeps a submission whose query string holds %00: intake reads no query', async () => {
    const f = await t.api('POST', '/v1/forms', key, { json: { name: 'nul query' } });
    const r = await t.request('POST', `/s/${f.json.id}?utm=%00`, {
      json: { name: 'kept' },
      headers: { 'x-forwarded-for': '198.51.100.90' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('received');
  });
});

describe('a value the database cannot hold', () => {
  it('is told apart from an unreachable database (422, not 503 or 500)', async () => {
    const errs: unknown[] = [];
    for (const q of [sql`select ${'a\u0000b'}::text`, sql`select ${'{"a":"\\u0000"}'}::jsonb`]) {
      errs.push(
        await t.deps.database.rows(q).then(
          () => null,
          (e: unknown) => e,
        ),
      );
    }
    for (const err of errs) {
      expect(err).toBeTruthy();
      expect(isUnstorableValue(err)).toBe(true);
      expect(isDbUnavailable(err)).toBe(false);
    }
  });
});
