import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_LIMITS } from '../../shared/plans.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';

let t: TestEnv;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const NextStep = { why: expect.any(String), method: expect.any(String), path: expect.any(String) };

describe('GET /v1/me', () => {
  it('answers the whole shape for a manage key (default plan selfhost: unlimited)', async () => {
    const a = await t.onboard();
    const r = await t.api('GET', '/v1/me', a.key);
    expect(r.status).toBe(200);
    const org = a.verify.organization;
    expect(r.json).toEqual({
      organization: {
        id: org.id,
        slug: org.slug,
        name: org.name,
        plan: 'selfhost',
        plan_source: 'selfhost',
        plan_expires_at: null,
        plan_note: null,
        timezone: 'UTC',
      },
      key: { prefix: expect.stringMatching(/^svc_live_/), scopes: ['manage'] },
      organizations: [{ id: org.id, slug: org.slug, name: org.name, role: null, is_active: true }],
      counts: { projects: 0, forms: 0, streams: 0, destinations: 0, routes: 0 },
      limits: {
        forms: null,
        submissions_per_month: null,
        destinations: null,
        retention_days: null,
        attachment_max_bytes: DEFAULT_PLAN_LIMITS.selfhost.attachment_max_bytes,
        attachments_per_submission: DEFAULT_PLAN_LIMITS.selfhost.attachments_per_submission,
        attachment_storage_bytes: null,
        used: { forms: 0, submissions_this_month: 0, attachment_storage_bytes: 0 },
      },
      next: expect.any(Array),
    });
    expect(a.key.startsWith(r.json.key.prefix)).toBe(true);
    expect(r.text).not.toContain(a.key);
    expect(r.json.next.length).toBeGreaterThan(0);
    for (const n of r.json.next) expect(n).toMatchObject(NextStep);
    // With no form yet, the first step is the quickstart.
    expect(r.json.next[0]).toMatchObject({ method: 'POST', path: '/v1/quickstart' });
  });

  it('counts projects and forms, and stops suggesting the quickstart once a form exists', async () => {
    const a = await t.onboard();
    await t.api('POST', '/v1/projects', a.key, { json: { name: 'Empty' } });
    await t.api('POST', '/v1/forms', a.key, { json: { name: 'One', project: 'site' } });
    await t.api('POST', '/v1/forms', a.key, { json: { name: 'Two', project: 'site' } });
    const r = await t.api('GET', '/v1/me', a.key);
    expect(r.json.counts).toEqual({ projects: 2, forms: 2, streams: 0, destinations: 0, routes: 0 });
    expect(r.json.limits.used.forms).toBe(2);
    expect(r.json.next.map((n: { path: string }) => n.path)).not.toContain('/v1/quickstart');
    // Counts are per organization.
    const b = await t.onboard();
    expect((await t.api('GET', '/v1/me', b.key)).json.counts.forms).toBe(0);
  });

  it('shows the key scopes for read and submit keys', async () => {
    const a = await t.onboard();
    const read = await t.onboard(a.email, { scopes: ['read'] });
    const submit = await t.onboard(a.email, { scopes: ['submit', 'read'] });
    expect((await t.api('GET', '/v1/me', read.key)).json.key.scopes).toEqual(['read']);
    const s = await t.api('GET', '/v1/me', submit.key);
    expect(s.json.key.scopes.sort()).toEqual(['read', 'submit']);
    expect(s.json.organization.id).toBe(a.verify.organization.id);
  });

  it('answers 401 without credentials', async () => {
    const r = await t.api('GET', '/v1/me', null);
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
  });
});

describe('GET /v1/me with DEFAULT_PLAN and PLAN_LIMITS', () => {
  it('reflects the configured plan and its overridden limits', async () => {
    const custom = await startTestApp({
      DEFAULT_PLAN: 'free',
      PLAN_LIMITS: JSON.stringify({ free: { forms: 1, submissions_per_month: 42 } }),
    });
    try {
      const a = await custom.onboard();
      await custom.api('POST', '/v1/forms', a.key, { json: { name: 'Only' } });
      const r = await custom.api('GET', '/v1/me', a.key);
      expect(r.status).toBe(200);
      expect(r.json.organization).toMatchObject({ plan: 'free', plan_source: 'free', plan_expires_at: null });
      expect(r.json.limits).toEqual({
        ...DEFAULT_PLAN_LIMITS.free,
        forms: 1,
        submissions_per_month: 42,
        used: { forms: 1, submissions_this_month: 0, attachment_storage_bytes: 0 },
      });
    } finally {
      await custom.close();
    }
  });
});
