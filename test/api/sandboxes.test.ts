import crypto from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { forms, sandboxes, submissions } from '../../server/db/schema.js';
import { deleteExpiredSandboxes } from '../../server/worker/sandbox-expiry.js';
import { startTestApp, type TestEnv } from '../helpers/app.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, email, readKey, otherKey } = await tenantApp();
let ipSeq = 0;

/** Each test its own client address, so the per-source allowance never couples tests. */
const nextIp = () => {
  ipSeq += 1;
  return `192.0.2.${ipSeq}`;
};

function create(env: TestEnv, body: unknown, idem: string | null = crypto.randomUUID(), ip = nextIp()) {
  const headers: Record<string, string> = { 'x-forwarded-for': ip };
  if (idem !== null) headers['idempotency-key'] = idem;
  return env.request('POST', '/v1/public/sandboxes', { json: body, headers });
}

async function sandbox(body: Record<string, unknown> = {}) {
  const r = await create(t, { name: `Box ${crypto.randomUUID().slice(0, 6)}`, ...body });
  expect(r.status, r.text).toBe(201);
  return r.json as { sandbox: { id: string; submit_url: string; expires_at: string }; sandbox_token: string };
}

const read = (id: string, auth?: string) =>
  t.request('GET', `/v1/public/sandboxes/${id}`, { headers: auth ? { authorization: auth } : {} });

const post = (url: string, json: unknown) =>
  t.request('POST', new URL(url).pathname, {
    json,
    headers: { accept: 'application/json', 'x-forwarded-for': nextIp() },
  });

const claim = (id: string, k: string, token?: string) =>
  t.api('POST', `/v1/sandboxes/${id}/claim`, k, { headers: token ? { 'service-sandbox-token': token } : {} });

describe('sandbox creation', () => {
  it('answers 201 with the sandbox, a token shown once and kept hashed, embed, verify, claim_url and next', async () => {
    const before = Date.now();
    const r = await create(t, { name: 'Agent test', origin: 'https://Example.COM/contact?x=1' });
    expect(r.status).toBe(201);
    const j = r.json;
    expect(j.sandbox).toMatchObject({ name: 'Agent test', status: 'active', accepted_count: 0, remaining: 5 });
    expect(j.sandbox.id).toMatch(/^sbx_/);
    expect(Date.parse(j.sandbox.expires_at) - before).toBeGreaterThan(24 * 3600e3 - 60e3);
    expect(Date.parse(j.sandbox.expires_at) - before).toBeLessThan(24 * 3600e3 + 60e3);
    expect(j.sandbox.claim).toMatchObject({
      deadline: j.sandbox.expires_at,
      api: { path: `/v1/sandboxes/${j.sandbox.id}/claim` },
    });
    expect(j.authorization).toEqual({ scheme: 'Sandbox', example: `Authorization: Sandbox ${j.sandbox_token}` });
    expect(j.embed.html).toContain(j.sandbox.submit_url);
    expect(j.verify.curl).toContain(j.sandbox.submit_url);
    expect(j.claim_url).toBe(`http://127.0.0.1:8787/claim/${j.sandbox.id}`);
    expect(j.next.length).toBeGreaterThan(1);
    const [row] = await t.deps.database.db.select().from(sandboxes).where(eq(sandboxes.id, j.sandbox.id));
    expect(row.origin).toBe('https://example.com');
    expect(JSON.stringify(row)).not.toContain(j.sandbox_token);
    // The inert form is nobody's: no organization lists it.
    const formId = new URL(j.sandbox.submit_url).pathname.split('/').pop();
    const listed = (await t.api('GET', '/v1/forms?limit=200', key)).json.data.map((f: { id: string }) => f.id);
    expect(listed).not.toContain(formId);
    expect((await t.api('GET', `/v1/forms/${formId}`, key)).status).toBe(404);
  });

  it('replays the same sandbox and token for the same key and body; another body is 409', async () => {
    const idem = crypto.randomUUID();
    const ip = nextIp();
    const a = await create(t, { name: 'Replay' }, idem, ip);
    const b = await create(t, { name: 'Replay' }, idem, ip);
    expect(b.status).toBe(201);
    expect(b.json.sandbox.id).toBe(a.json.sandbox.id);
    expect(b.json.sandbox_token).toBe(a.json.sandbox_token);
    const c = await create(t, { name: 'Replay changed' }, idem, ip);
    expect(c.status).toBe(409);
    expect(c.json.error.code).toBe('idempotency_conflict');
    expect(c.json.error.hint).toBeTruthy();
  });

  it('refuses bad keys and bodies with the envelope', async () => {
    for (const idem of [null, crypto.randomUUID().toUpperCase(), '6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'plain']) {
      const r = await create(t, { name: 'x' }, idem);
      expect(r.status, String(idem)).toBe(422);
      expect(r.json.error.details.issues[0].path).toBe('Idempotency-Key');
    }
    for (const body of [
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'x', colour: 'blue' },
      { name: 'x', origin: 'ftp://example.com' },
      { name: 'x', claim_email: 'not-an-email' },
      {},
    ]) {
      const r = await create(t, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
    }
  });

  it('limits creation per source (429) and in all (503), and can be turned off (503)', async () => {
    const limited = await startTestApp({ SANDBOX_SOURCE_ALLOWANCE: '2', SANDBOX_GLOBAL_CAP: '3' });
    try {
      expect((await create(limited, { name: 'a' }, undefined, '198.51.100.1')).status).toBe(201);
      expect((await create(limited, { name: 'b' }, undefined, '198.51.100.1')).status).toBe(201);
      const third = await create(limited, { name: 'c' }, undefined, '198.51.100.1');
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('3600');
      expect((await create(limited, { name: 'd' }, undefined, '198.51.100.2')).status).toBe(201);
      const full = await create(limited, { name: 'e' }, undefined, '198.51.100.3');
      expect(full.status).toBe(503);
      expect(full.json.error.hint).toBeTruthy();
    } finally {
      await limited.close();
    }
    const off = await startTestApp({ SANDBOXES: 'false' });
    try {
      const r = await create(off, { name: 'off' });
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('service_unavailable');
    } finally {
      await off.close();
    }
  });
});

describe('sandbox submissions and reads', () => {
  it('keeps 5 inert test submissions; a sixth is 402 and not stored; no files, no events', async () => {
    const s = await sandbox();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(s.sandbox.submit_url, { name: `visitor ${i}`, n: i })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => r.status)).toEqual([402, 402, 402]);
    expect(refused[0].json.error).toMatchObject({ code: 'plan_limit_reached', details: { max: 5 } });
    expect(refused[0].json.error.hint).toMatch(/claim/i);
    for (const r of answers.filter((x) => x.status === 200)) expect(r.json.deliveries).toEqual([]);

    const form = new FormData();
    form.set('name', 'x');
    form.set('doc', new Blob(['file']), 'a.txt');
    const other = await sandbox();
    const file = await t.request('POST', new URL(other.sandbox.submit_url).pathname, {
      body: form,
      headers: { accept: 'application/json' },
    });
    expect(file.status).toBeGreaterThanOrEqual(400);
    expect(file.status).toBeLessThan(500);

    const v = await read(s.sandbox.id, `Sandbox ${s.sandbox_token}`);
    expect(v.status).toBe(200);
    expect(v.json).toMatchObject({ id: s.sandbox.id, accepted_count: 5, remaining: 0, status: 'active' });
    expect(v.json.submissions).toHaveLength(5);
    expect(Object.keys(v.json.submissions[0]).sort()).toEqual(['data', 'id', 'meta', 'received_at']);
    const formId = new URL(s.sandbox.submit_url).pathname.split('/').pop() as string;
    const stored = await t.deps.database.db.select().from(submissions).where(eq(submissions.formId, formId));
    expect(stored.every((x) => x.test)).toBe(true);
    const events = await t.deps.database.rows<{ n: number }>(
      sql`select count(*)::int as n from events where subject->>'form_id' = ${formId}`,
    );
    expect(events[0].n).toBe(0);
  });

  it('reads only with its own token: 401 otherwise; 410 once expired', async () => {
    const a = await sandbox();
    const b = await sandbox();
    expect((await read(a.sandbox.id)).status).toBe(401);
    expect((await read(a.sandbox.id, `Bearer ${key}`)).status).toBe(401);
    expect((await read(a.sandbox.id, `Sandbox ${b.sandbox_token}`)).status).toBe(401);
    expect((await read(a.sandbox.id, 'Sandbox sbt_wrong')).status).toBe(401);
    expect((await read('sbx_unknown', `Sandbox ${a.sandbox_token}`)).status).toBe(401);
    await t.deps.database.db
      .update(sandboxes)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(sandboxes.id, a.sandbox.id));
    const gone = await read(a.sandbox.id, `Sandbox ${a.sandbox_token}`);
    expect(gone.status).toBe(410);
    expect(gone.json.error.details.status).toBe('expired');
    expect((await post(a.sandbox.submit_url, { late: true })).status).toBe(410);
  });

  it('serves a plain claim page with escaped content', async () => {
    const s = await sandbox();
    const page = await t.request('GET', `/claim/${s.sandbox.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).toContain(`/v1/sandboxes/${s.sandbox.id}/claim`);
    expect(page.text).not.toContain(s.sandbox_token);
    const odd = await t.request('GET', `/claim/${encodeURIComponent('<b>x</b>')}`);
    expect(odd.text).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(odd.text).toContain('does not exist');
  });
});

describe('claiming', () => {
  it('refuses a missing or wrong token, a read key and an unknown id; the sandbox stays active', async () => {
    const s = await sandbox();
    const other = await sandbox();
    expect((await claim(s.sandbox.id, key)).status).toBe(400);
    expect((await claim(s.sandbox.id, key, other.sandbox_token)).status).toBe(403);
    expect((await claim(s.sandbox.id, readKey, s.sandbox_token)).status).toBe(403);
    expect((await claim('sbx_nope', key, s.sandbox_token)).status).toBe(404);
    const v = await read(s.sandbox.id, `Sandbox ${s.sandbox_token}`);
    expect(v.json.status).toBe('active');
  });

  it('moves the form into the organization with its id, submit URL and inert submissions', async () => {
    const s = await sandbox({ name: 'Contact' });
    await post(s.sandbox.submit_url, { email: 'a@example.com' });
    const r = await claim(s.sandbox.id, key, s.sandbox_token);
    expect(r.status, r.text).toBe(200);
    expect(r.json.sandbox.status).toBe('claimed');
    const formId = new URL(s.sandbox.submit_url).pathname.split('/').pop() as string;
    expect(r.json.form).toMatchObject({ id: formId, submit_url: s.sandbox.submit_url, name: 'Contact' });
    expect(r.json.next.map((n: { path: string }) => n.path)).toContain('/v1/routes');
    const subs = (await t.api('GET', `/v1/forms/${formId}/submissions`, key)).json.data;
    expect(subs).toHaveLength(1);
    expect(subs[0].test).toBe(true);
    expect((await t.api('GET', `/v1/forms/${formId}`, otherKey)).status).toBe(404);
    expect((await read(s.sandbox.id, `Sandbox ${s.sandbox_token}`)).status).toBe(410);
    expect((await claim(s.sandbox.id, otherKey, s.sandbox_token)).status).toBe(410);
    // Now an ordinary form: it can be routed and takes more than five submissions.
    const dest = await t.api('POST', '/v1/destinations', key, {
      json: { type: 'webhook', name: 'h', config: { url: 'https://hooks.example.com/claimed' } },
    });
    expect(
      (await t.api('POST', '/v1/routes', key, { json: { form_id: formId, destination_id: dest.json.id } })).status,
    ).toBe(201);
    for (let i = 0; i < 6; i += 1) expect((await post(s.sandbox.submit_url, { i })).status).toBe(200);
    const last = await post(s.sandbox.submit_url, { i: 'routed' });
    expect(last.json.status).toBe('received');
    const ds = (await t.api('GET', `/v1/deliveries?submission_id=${last.json.submission_id}`, key)).json.data;
    expect(ds).toHaveLength(1);
  });

  it('a claim_email binds who may claim', async () => {
    const s = await sandbox({ claim_email: email.toUpperCase() });
    const denied = await claim(s.sandbox.id, otherKey, s.sandbox_token);
    expect(denied.status).toBe(403);
    expect(denied.json.error.hint).toBeTruthy();
    expect((await claim(s.sandbox.id, key, s.sandbox_token)).status).toBe(200);
  });
});

describe('housekeeping', () => {
  it('deletes expired sandboxes: unclaimed with their form and submissions, claimed ones keep the form', async () => {
    const open = await sandbox();
    await post(open.sandbox.submit_url, { x: 1 });
    const kept = await sandbox();
    expect((await claim(kept.sandbox.id, key, kept.sandbox_token)).status).toBe(200);
    const fresh = await sandbox();
    const past = new Date(Date.now() - 1000);
    for (const id of [open.sandbox.id, kept.sandbox.id]) {
      await t.deps.database.db.update(sandboxes).set({ expiresAt: past }).where(eq(sandboxes.id, id));
    }
    // (An earlier test expired one more.)
    expect(await deleteExpiredSandboxes(t.deps)).toBeGreaterThanOrEqual(2);
    const db = t.deps.database.db;
    const ids = (await db.select({ id: sandboxes.id }).from(sandboxes)).map((r) => r.id);
    expect(ids).not.toContain(open.sandbox.id);
    expect(ids).not.toContain(kept.sandbox.id);
    expect(ids).toContain(fresh.sandbox.id);
    const openForm = new URL(open.sandbox.submit_url).pathname.split('/').pop() as string;
    const keptForm = new URL(kept.sandbox.submit_url).pathname.split('/').pop() as string;
    expect(await db.select().from(forms).where(eq(forms.id, openForm))).toEqual([]);
    expect(await db.select().from(submissions).where(eq(submissions.formId, openForm))).toEqual([]);
    expect((await t.api('GET', `/v1/forms/${keptForm}`, key)).status).toBe(200);
  });
});
