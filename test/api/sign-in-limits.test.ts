import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/**
 * Sign-in limits (docs/authentication.md): one budget of wrong code guesses per address across all
 * its codes, a per-IP limit on verify-code and sign-in, and no way around either with an
 * Idempotency-Key (issue 28, points 2 and 9).
 */
let t: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const fresh = (tag: string) => `${tag}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

async function codeFor(env: TestEnv, email: string, headers: Record<string, string> = {}) {
  const before = env.smtp.messages.length;
  expect((await env.request('POST', '/v1/auth/request-code', { json: { email }, headers })).status).toBe(200);
  const mail = await env.smtp.waitFor((m) => env.smtp.messages.indexOf(m) >= before && m.to.includes(email));
  return /\b(\d{6})\b/.exec(mail.text)?.[1] as string;
}

const verify = (json: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', '/v1/auth/verify-code', { json, headers });

function expectLimited(r: Awaited<ReturnType<typeof verify>>) {
  expect(r.status).toBe(429);
  expect(r.json.error.code).toBe('rate_limited');
  expect(r.json.error.hint).toMatch(/Wait \d+ seconds/);
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(600);
}

describe('one guess budget per address', () => {
  it('spans all the codes of an address: a new code brings no new tries', async () => {
    const email = fresh('budget');
    const first = await codeFor(t, email);
    for (let i = 0; i < 3; i += 1) expect((await verify({ email, code: wrong(first) })).status).toBe(401);
    const second = await codeFor(t, email);
    for (let i = 0; i < 2; i += 1) expect((await verify({ email, code: wrong(second) })).status).toBe(401);
    // 5 wrong guesses in all: even the right code of the newest mail is refused now.
    expectLimited(await verify({ email, code: second }));
    expectLimited(await t.request('POST', '/v1/auth/sign-in', { json: { email, code: second } }));
  });

  it('does not count a right code, nor a body refused before any code was compared', async () => {
    const email = fresh('fair');
    for (let i = 0; i < 4; i += 1) {
      const code = await codeFor(t, email);
      expect((await verify({ email, code, key_name: '' })).status).toBe(422);
      expect((await verify({ email, code: wrong(code) })).status).toBe(401);
      expect((await verify({ email, code })).status).toBe(201);
    }
  });

  it('counts every request that carries a code, whatever its Idempotency-Key', async () => {
    const email = fresh('keys');
    const code = await codeFor(t, email);
    for (let i = 0; i < 5; i += 1) {
      const r = await verify({ email, code: wrong(code) }, { 'idempotency-key': crypto.randomUUID() });
      expect(r.status).toBe(401);
    }
    expectLimited(await verify({ email, code }, { 'idempotency-key': crypto.randomUUID() }));
  });

  it('counts a replayed wrong code as another wrong guess', async () => {
    const email = fresh('replayed');
    const code = await codeFor(t, email);
    const key = crypto.randomUUID();
    for (let i = 0; i < 5; i += 1)
      expect((await verify({ email, code: wrong(code) }, { 'idempotency-key': key })).status).toBe(401);
    expectLimited(await verify({ email, code: wrong(code) }, { 'idempotency-key': key }));
  });
});

describe('a leaked Idempotency-Key is no oracle for the code', () => {
  it('answers guesses under the key as wrong codes, and never gives them the kept answer', async () => {
    const email = fresh('oracle');
    const code = await codeFor(t, email);
    const key = crypto.randomUUID();
    const first = await verify({ email, code }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    // Someone who read the key in a log asks for a new code for the address and guesses with it.
    const fresher = await codeFor(t, email);
    const plain = await verify({ email, code: wrong(fresher) });
    const underKey = await verify({ email, code: wrong(fresher) }, { 'idempotency-key': key });
    // Another body under the key is answered exactly as a wrong code is (it used to be 409).
    expect(underKey.status).toBe(plain.status);
    expect(underKey.json.error).toEqual(plain.json.error);
    expect(underKey.headers.get('idempotent-replayed')).toBeNull();
    expect(underKey.text).not.toContain(first.json.api_key);
    for (let i = 0; i < 3; i += 1)
      expect((await verify({ email, code: wrong(fresher) }, { 'idempotency-key': key })).status).toBe(401);
    // The budget is spent for everyone: no more guesses, not even the right body under the key.
    const exact = await verify({ email, code }, { 'idempotency-key': key });
    expectLimited(exact);
    expect(exact.text).not.toContain(first.json.api_key);
  });
});

describe('the per-IP limit on verify-code and sign-in', () => {
  let small: TestEnv;
  beforeAll(async () => {
    small = await startTestApp({ SIGN_IN_TRIES_PER_IP: '3' });
  });
  afterAll(() => small.close());

  it('refuses the IP beyond SIGN_IN_TRIES_PER_IP requests, across addresses, right codes included', async () => {
    const ip = { 'x-forwarded-for': '198.51.100.77' };
    const email = fresh('ip');
    const code = await codeFor(small, email, ip);
    const post = (path: string, json: Record<string, unknown>, headers = ip) =>
      small.request('POST', path, { json, headers });
    expect((await post('/v1/auth/verify-code', { email: fresh('a'), code: '000000' })).status).toBe(401);
    expect((await post('/v1/auth/sign-in', { email: fresh('b'), code: '000000' })).status).toBe(401);
    expect((await post('/v1/auth/verify-code', { email, code })).status).toBe(201);
    const over = await post('/v1/auth/sign-in', { email, code: '000000' });
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe('rate_limited');
    expect(over.json.error.hint).toBeTruthy();
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another client is not affected.
    const other = await post(
      '/v1/auth/verify-code',
      { email: fresh('c'), code: '000000' },
      {
        'x-forwarded-for': '198.51.100.78',
      },
    );
    expect(other.status).toBe(401);
  });
});
