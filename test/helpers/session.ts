import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { TestEnv } from './app.js';

/** Email code → POST /v1/auth/sign-in; the session cookie, the user and their personal organization. */
export async function signIn(t: TestEnv, email = `s-${crypto.randomUUID().slice(0, 8)}@example.com`) {
  const before = t.smtp.messages.length;
  expect((await t.request('POST', '/v1/auth/request-code', { json: { email } })).status).toBe(200);
  const mail = await t.smtp.waitFor(
    (m) => t.smtp.messages.indexOf(m) >= before && m.to.includes(email) && /code/i.test(m.subject),
  );
  const code = /\b(\d{6})\b/.exec(mail.subject)?.[1];
  const r = await t.request('POST', '/v1/auth/sign-in', { json: { email, code } });
  expect(r.status).toBe(200);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0];
  return {
    cookie,
    email,
    userId: r.json.user.id as string,
    name: r.json.user.name as string,
    personal: r.json.organization as { id: string },
  };
}

export type Session = Awaited<ReturnType<typeof signIn>>;
