import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { deleteExpiredPowSpent, issuePowChallenge, POW_COST, POW_DEFAULT_DIFFICULTY } from '../../server/domain/pow.js';
import { runHousekeeping } from '../../server/worker/housekeeping.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, otherKey } = await tenantApp();
const countSql = sql`select count(*)::text as n from pow_spent`;

// Small difficulties keep the solving quick; the default is measured in the bench.
async function powForm(difficulty = 20) {
  const f = await t.api('POST', '/v1/forms', key, { json: { name: `PoW ${Math.random()}` } });
  expect(f.status).toBe(201);
  const settings = { challenge: { provider: 'pow', difficulty } };
  const patched = await t.api('PATCH', `/v1/forms/${f.json.id}`, key, { json: { settings } });
  expect(patched.status).toBe(200);
  expect(patched.json.settings.challenge).toEqual(settings.challenge);
  return f.json.id as string;
}

async function challengeOf(formId: string): Promise<Challenge> {
  const r = await t.request('GET', `/s/${formId}/challenge`, { headers: { origin: 'https://site.example' } });
  expect(r.status).toBe(200);
  return r.json as Challenge;
}

/** The widget's payload: base64 of {challenge, solution}. */
async function solved(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  expect(solution).not.toBeNull();
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

const post = (formId: string, json: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request('POST', `/s/${formId}`, { json, headers: { 'x-forwarded-for': '203.0.113.9', ...headers } });

async function stored(id: string) {
  const r = await t.api('GET', `/v1/submissions/${id}`, key);
  expect(r.status).toBe(200);
  return r.json as { status: string; quarantine_reason: string | null; data: Record<string, unknown> };
}

describe('the proof-of-work challenge', () => {
  it('issues a signed, expiring ALTCHA challenge: CORS-open, never cached', async () => {
    const formId = await powForm();
    const r = await t.request('GET', `/s/${formId}/challenge`, { headers: { origin: 'https://site.example' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('cache-control')).toBe('no-store');
    const c = r.json as Challenge;
    expect(c.parameters).toMatchObject({ algorithm: 'PBKDF2/SHA-256', cost: POW_COST, data: { form: formId } });
    expect(c.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(c.parameters.keySignature).toMatch(/^[0-9a-f]{64}$/);
    const inS = (c.parameters.expiresAt ?? 0) - Date.now() / 1000;
    expect(inS).toBeGreaterThan(590);
    expect(inS).toBeLessThanOrEqual(600);
    // Each answer is new.
    expect((await challengeOf(formId)).signature).not.toBe(c.signature);
    // A browser may send the solution in the header: the preflight allows it.
    const pre = await t.request('OPTIONS', `/s/${formId}`, {
      headers: { origin: 'https://site.example', 'access-control-request-headers': 'x-altcha' },
    });
    expect(pre.headers.get('access-control-allow-headers')).toContain('X-Altcha');
  });

  it('answers an unknown form with the 404 envelope', async () => {
    const r = await t.request('GET', '/s/fm_doesnotexist/challenge');
    expect(r.status).toBe(404);
    expect(r.json.error).toMatchObject({ code: 'not_found' });
    expect(r.json.error.hint).toBeTruthy();
  });

  it('receives a solved post, and removes the altcha field from the data', async () => {
    const formId = await powForm();
    const altcha = await solved(await challengeOf(formId));
    const r = await post(formId, { email: 'ada@example.com', message: 'hello', altcha });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, status: 'received' });
    const s = await stored(r.json.submission_id);
    expect(s.data).toEqual({ email: 'ada@example.com', message: 'hello' });
    expect(s.quarantine_reason).toBeNull();
  });

  it('takes the solution in the X-Altcha header, and form-encoded posts too', async () => {
    const formId = await powForm();
    const viaHeader = await post(
      formId,
      { email: 'h@example.com' },
      { 'x-altcha': await solved(await challengeOf(formId)) },
    );
    expect(viaHeader.json.status).toBe('received');
    const body = new URLSearchParams({ email: 'f@example.com', altcha: await solved(await challengeOf(formId)) });
    const form = await t.request('POST', `/s/${formId}`, {
      body: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    expect(form.json.status).toBe('received');
    expect((await stored(form.json.submission_id)).data).toEqual({ email: 'f@example.com' });
  });

  it('stores a missing, unreadable, wrong or tampered solution quarantined with challenge_failed, answered like a challenge failure', async () => {
    const formId = await powForm();
    const challenge = await challengeOf(formId);
    const good = await solveChallenge({ challenge, deriveKey });
    const wrong = { ...good, counter: (good?.counter ?? 0) + 1, derivedKey: '00'.repeat(32) };
    const tampered = { ...challenge, parameters: { ...challenge.parameters, keyPrefix: '0' } };
    const payloads: (string | undefined)[] = [
      undefined,
      'not base64 json',
      Buffer.from(JSON.stringify({ challenge, solution: wrong })).toString('base64'),
      Buffer.from(JSON.stringify({ challenge: tampered, solution: good })).toString('base64'),
    ];
    for (const altcha of payloads) {
      const r = await post(formId, { email: 'bot@example.com', ...(altcha === undefined ? {} : { altcha }) });
      // The spec's answer to a challenge failure: stored, 200 to a JSON client, ok false.
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ ok: false, status: 'quarantined' });
      const s = await stored(r.json.submission_id);
      expect(s).toMatchObject({ status: 'quarantined', quarantine_reason: 'challenge_failed' });
      expect(s.data).toEqual({ email: 'bot@example.com' });
    }
  });

  it('refuses a replayed solution, and one for another form', async () => {
    const formId = await powForm();
    const altcha = await solved(await challengeOf(formId));
    expect((await post(formId, { email: 'a@example.com', altcha })).json.status).toBe('received');
    const again = await post(formId, { email: 'a@example.com', altcha });
    expect((await stored(again.json.submission_id)).quarantine_reason).toBe('challenge_failed');
    const other = await powForm();
    const elsewhere = await post(other, { email: 'a@example.com', altcha: await solved(await challengeOf(formId)) });
    expect((await stored(elsewhere.json.submission_id)).quarantine_reason).toBe('challenge_failed');
  });

  it('refuses an expired challenge, and housekeeping forgets spent solutions once they expire', async () => {
    const formId = await powForm();
    const old = await issuePowChallenge(t.deps, formId, 20, new Date(Date.now() - 11 * 60_000));
    const late = await post(formId, { email: 'late@example.com', altcha: await solved(old) });
    expect((await stored(late.json.submission_id)).quarantine_reason).toBe('challenge_failed');

    const altcha = await solved(await challengeOf(formId));
    expect((await post(formId, { email: 'a@example.com', altcha })).json.status).toBe('received');
    const count = async () => Number((await t.deps.database.rows<{ n: string }>(countSql))[0].n);
    expect(await count()).toBeGreaterThanOrEqual(1);
    const report = await runHousekeeping(t.deps);
    expect(report['pow-spent-expiry']).toMatchObject({ ok: true });
    expect(await count()).toBeGreaterThanOrEqual(1); // not expired yet: kept
    const later = { database: t.deps.database, now: () => new Date(Date.now() + 11 * 60_000) };
    expect((await deleteExpiredPowSpent(later)).deleted).toBeGreaterThanOrEqual(1);
    expect(await count()).toBe(0);
  });

  it('a form without the challenge ignores altcha (and drops it from the data); the contract takes a default difficulty', async () => {
    const f = await t.api('POST', '/v1/forms', key, { json: { name: 'Default difficulty' } });
    const on = await t.api('PATCH', `/v1/forms/${f.json.id}`, key, {
      json: { settings: { challenge: { provider: 'pow' } } },
    });
    expect(on.status, on.text).toBe(200);
    expect(on.json.settings.challenge).toEqual({ provider: 'pow' });
    const c = await challengeOf(f.json.id);
    // The counter is drawn around the default difficulty: no way to see it but solving.
    expect(c.parameters.cost * POW_DEFAULT_DIFFICULTY).toBeGreaterThan(0);
    const bad = await t.api('PATCH', `/v1/forms/${f.json.id}`, key, {
      json: { settings: { challenge: { provider: 'pow', difficulty: 0 } } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.error.hint).toBeTruthy();
    const plain = await t.api('POST', '/v1/forms', key, { json: { name: 'No challenge' } });
    const r = await post(plain.json.id, { email: 'p@example.com', altcha: 'anything' });
    expect(r.json.status).toBe('received');
    expect((await stored(r.json.submission_id)).data).toEqual({ email: 'p@example.com' });
  });

  it('the embed snippets carry the widget, and the fetch snippet gets, solves and sends a challenge in code', async () => {
    const formId = await powForm();
    const e = await t.api('GET', `/v1/forms/${formId}/embed`, key);
    expect(e.status).toBe(200);
    expect(e.json.html).toMatch(
      /^<script type="module" src="http:\/\/127\.0\.0\.1:8787\/assets\/pow\/altcha\.js\?v=[0-9a-f]{12}"><\/script>/,
    );
    expect(e.json.html).toContain(
      `<altcha-widget challenge="http://127.0.0.1:8787/s/${formId}/challenge" name="altcha" auto="onsubmit"></altcha-widget>`,
    );
    expect(e.json.astro).toContain('<altcha-widget');
    expect(e.json.react).toContain(
      `<altcha-widget challenge="http://127.0.0.1:8787/s/${formId}/challenge" name="altcha" />`,
    );
    expect(e.json.nextjs_action).toContain("'X-Altcha': altcha");
    // The fetch snippet as written, its imports given as arguments and its requests sent to the app.
    const code = (e.json.fetch as string)
      .split('\n')
      .filter((l) => !l.startsWith('import '))
      .join('\n');
    const answers: { status: string }[] = [];
    const appFetch = async (url: string, init?: RequestInit) => {
      const res = await t.app.request(url.replace('http://127.0.0.1:8787', ''), {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), 'x-forwarded-for': '203.0.113.10' },
      });
      const clone = res.clone();
      if (init?.method === 'POST') answers.push((await clone.json()) as { status: string });
      return res;
    };
    const { deriveKey: webDeriveKey } = await import('altcha-lib/algorithms/web/pbkdf2');
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
    await new AsyncFunction('fetch', 'solveChallenge', 'deriveKey', code)(appFetch, solveChallenge, webDeriveKey);
    expect(answers).toEqual([expect.objectContaining({ ok: true, status: 'received' })]);
    // Without the setting, no widget.
    const plain = await t.api('POST', '/v1/forms', key, { json: { name: 'Plain embed' } });
    const pe = await t.api('GET', `/v1/forms/${plain.json.id}/embed`, key);
    expect(pe.json.html).not.toContain('altcha');
    expect(pe.json.fetch).not.toContain('altcha');
  });

  it('serves the widget itself: a module, its stylesheet and its worker, loadable from any site', async () => {
    for (const [file, type] of [
      ['altcha.js', 'text/javascript'],
      ['altcha.css', 'text/css'],
      ['pbkdf2.js', 'text/javascript'],
    ]) {
      const r = await t.request('GET', `/assets/pow/${file}?v=1`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain(type);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.text.length).toBeGreaterThan(1000);
    }
    const js = (await t.request('GET', '/assets/pow/altcha.js')).text;
    expect(js).toContain('customElements.define("altcha-widget"');
    expect(js).toContain('$altcha.algorithms.set(name, make)');
    const missing = await t.request('GET', '/assets/pow/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatchObject({ code: 'not_found' });
  });

  it("the dashboard's test submission solves its own challenge; its form page shows the widget in the snippets", async () => {
    const s = await dashboardSession(t);
    const f = await t.api('POST', '/v1/forms', s.key, { json: { name: 'Dash PoW' } });
    const settings = { challenge: { provider: 'pow' } };
    expect((await t.api('PATCH', `/v1/forms/${f.json.id}`, s.key, { json: { settings } })).status).toBe(200);
    const sent = await s.post('/app/inbox/test', { form_id: f.json.id });
    expect(sent.status).toBe(303);
    expect(decodeURIComponent(sent.location ?? '')).toContain('was stored as received');
    const page = await s.get(`/app/forms/${f.json.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('altcha-widget');
    expect(page.html).toContain('<option value="pow" selected="">Proof of work</option>');

    // The settings form's challenge selector: proof of work with a difficulty, a bad one next to its field, none.
    const base = { name: 'Dash PoW', schema_mode: 'observe' };
    const set = await s.post(`/app/forms/${f.json.id}/settings`, {
      ...base,
      challenge: 'pow',
      challenge_difficulty: '50',
    });
    expect(set.status).toBe(303);
    const got = async () => (await t.api('GET', `/v1/forms/${f.json.id}`, s.key)).json.settings.challenge;
    expect(await got()).toEqual({ provider: 'pow', difficulty: 50 });
    const bad = await s.post(`/app/forms/${f.json.id}/settings`, {
      ...base,
      challenge: 'pow',
      challenge_difficulty: '0',
    });
    expect(bad.status).toBe(422);
    expect(bad.html).toMatch(/id="s-difficulty-err"[^>]*>[^<]*\S/);
    expect(await got()).toEqual({ provider: 'pow', difficulty: 50 });
    const off = await s.post(`/app/forms/${f.json.id}/settings`, { ...base, challenge: '' });
    expect(off.status).toBe(303);
    expect(await got()).toBeUndefined();
  });

  it("keeps another organization's submissions apart", async () => {
    const formId = await powForm();
    const r = await post(formId, { email: 'x@example.com' });
    expect((await t.api('GET', `/v1/submissions/${r.json.submission_id}`, otherKey)).status).toBe(404);
  });
});
