import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../../shared/contracts/index.js';
import type { Security, SecuritySchemeName } from '../../shared/contracts/security.js';
import { startTestApp } from '../helpers/app.js';
import { VALID_BODIES } from '../helpers/bodies.js';
import { signIn } from '../helpers/session.js';

/**
 * The contract's `security` says what the service does. For every operation that needs credentials,
 * called with an API key (manage) and with a session cookie (an owner's, who is also a platform
 * operator): a scheme the operation declares is not refused (no 401, no 403), and a scheme it does
 * not declare is (401 or 403). Ids are made up, so a call that passes authorization ends at 404 or
 * 422 and changes nothing.
 */
const EMAIL = 'security-schemes@example.com';
const t = await startTestApp({ ADMIN_EMAILS: EMAIL });
afterAll(() => t.close());
const { key } = await t.onboard(EMAIL);
const { cookie } = await signIn(t, EMAIL);

type Way = 'ApiKey' | 'Session';
const CREDENTIALS: Record<Way, Record<string, string>> = {
  ApiKey: { authorization: `Bearer ${key}` },
  Session: { cookie },
};

/** Whether a scheme satisfies a requirement on its own, only beside another scheme, or not at all. */
function declared(security: Security, way: Way): 'alone' | 'with-others' | 'no' {
  const reqs = security.map((r) => Object.keys(r) as SecuritySchemeName[]);
  if (reqs.some((names) => names.length === 1 && names[0] === way)) return 'alone';
  return reqs.some((names) => names.includes(way)) ? 'with-others' : 'no';
}

describe("every operation's declared security schemes are what the service accepts", () => {
  // Credentials are optional where a requirement is empty (public operations, sign-out, /mcp): no refusal to compare.
  const checked = operations.filter((o) => o.security.length > 0 && o.security.every((r) => Object.keys(r).length));

  it.each(checked.map((o) => [o.operationId, o] as const))('%s', async (_id, o) => {
    const path = o.path.replace(/\{[^}]+\}/g, 'x_1');
    for (const way of ['ApiKey', 'Session'] as const) {
      const d = declared(o.security, way);
      if (d === 'with-others') continue; // e.g. the sandbox claim: a key or session together with the sandbox token
      const r = await t.request(o.method.toUpperCase(), path, {
        headers: CREDENTIALS[way],
        ...(o.method === 'get' || o.method === 'delete' ? {} : { json: VALID_BODIES[o.operationId] ?? {} }),
      });
      const what = `${o.method.toUpperCase()} ${o.path} with ${way} (${d === 'alone' ? 'declared' : 'not declared'}): ${r.status} ${r.text.slice(0, 200)}`;
      if (d === 'alone') expect([401, 403], what).not.toContain(r.status);
      else expect([401, 403], what).toContain(r.status);
    }
  });

  it('covers the operations that take only a session, and the member changes among them', () => {
    const sessionOnly = checked.filter((o) => declared(o.security, 'ApiKey') === 'no').map((o) => o.operationId);
    expect(sessionOnly).toEqual(expect.arrayContaining(['members_update', 'members_remove', 'organizations_switch']));
    expect(checked.length).toBeGreaterThan(60);
  });
});
