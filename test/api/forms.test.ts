import { describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp();

const BASE = 'http://127.0.0.1:8787';

describe('POST /v1/forms', () => {
  it('answers FormCreated with submit_url, embed, verify and next steps', async () => {
    const r = await t.api('POST', '/v1/forms', key, {
      json: { name: 'Contact Us', project: 'website', tags: ['lead', 'web'] },
    });
    expect(r.status).toBe(201);
    const f = r.json;
    expect(f).toMatchObject({
      id: expect.stringMatching(/^fm_/),
      project_id: expect.stringMatching(/^prj_/),
      slug: 'contact-us',
      name: 'Contact Us',
      tags: ['lead', 'web'],
      status: 'active',
      schema_mode: 'observe',
      current_schema_version: null,
      settings: {},
      streams: [],
      counts: { submissions: 0, last_submission_at: null },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    expect(f.submit_url).toBe(`${BASE}/s/${f.id}`);
    for (const k of ['html', 'fetch', 'react', 'astro', 'nextjs_action']) {
      expect(typeof f.embed[k], k).toBe('string');
      expect(f.embed[k], k).toContain(f.submit_url);
    }
    expect(f.embed.html).toMatch(/<form[^>]+action=/);
    expect(f.verify.curl).toContain(f.submit_url);
    expect(f.verify.curl).toMatch(/^curl /);
    expect(typeof f.verify.then).toBe('string');
    expect(f.next.length).toBeGreaterThan(0);
    for (const n of f.next) {
      expect(n).toMatchObject({ why: expect.any(String), method: expect.any(String), path: expect.any(String) });
      expect(n.path.startsWith('/')).toBe(true);
    }
  });

  it('creates the project when missing, reuses it after, and defaults to "default"', async () => {
    const a = await t.api('POST', '/v1/forms', key, { json: { name: 'A', project: 'brand-new' } });
    expect(a.status).toBe(201);
    const projects = await t.api('GET', '/v1/projects?limit=200', key);
    const p = projects.json.data.find((x: { slug: string }) => x.slug === 'brand-new');
    expect(p?.id).toBe(a.json.project_id);
    const b = await t.api('POST', '/v1/forms', key, { json: { name: 'B', project: 'brand-new' } });
    expect(b.json.project_id).toBe(a.json.project_id);
    const d = await t.api('POST', '/v1/forms', key, { json: { name: 'In default' } });
    const def = (await t.api('GET', '/v1/projects?limit=200', key)).json.data.find(
      (x: { slug: string }) => x.slug === 'default',
    );
    expect(d.json.project_id).toBe(def.id);
  });

  it('is idempotent by (project, slug) with if_exists return; a duplicate is 409', async () => {
    const a = await t.api('POST', '/v1/forms', key, { json: { name: 'Signup', project: 'idem' } });
    expect(a.status).toBe(201);
    const again = await t.api('POST', '/v1/forms', key, {
      json: { name: 'Signup', project: 'idem', if_exists: 'return' },
    });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(a.json.id);
    expect(again.json.submit_url).toBe(a.json.submit_url);
    expect(again.json.embed.html).toContain(a.json.submit_url);
    const dup = await t.api('POST', '/v1/forms', key, { json: { name: 'Signup', project: 'idem' } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe('conflict');
    expect(dup.json.error.hint).toMatch(/if_exists/);
    // The same slug in another project is another form.
    const other = await t.api('POST', '/v1/forms', key, { json: { name: 'Signup', project: 'idem-2' } });
    expect(other.status).toBe(201);
    expect(other.json.id).not.toBe(a.json.id);
  });

  it('answers 422 with details.issues [{path, message}] for invalid bodies', async () => {
    const bad = [
      {},
      { name: '' },
      { name: 'x', project: 'Not A Slug' },
      { name: 'x', schema_mode: 'strict' },
      { name: 'x', tags: 'lead' },
      { name: 'x', unknown: 1 },
      { name: 'x'.repeat(201) },
    ];
    for (const json of bad) {
      const r = await t.api('POST', '/v1/forms', key, { json });
      expect(r.status, JSON.stringify(json)).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.details.issues.length).toBeGreaterThan(0);
      for (const i of r.json.error.details.issues) {
        expect(i).toEqual({ path: expect.any(String), message: expect.any(String) });
      }
    }
    const r = await t.api('POST', '/v1/forms', key, { json: { name: 'x', schema_mode: 'strict' } });
    expect(r.json.error.details.issues[0].path).toBe('schema_mode');
  });

  it('requires credentials and the manage scope', async () => {
    expect((await t.api('POST', '/v1/forms', null, { json: { name: 'x' } })).status).toBe(401);
    expect((await t.api('POST', '/v1/forms', readKey, { json: { name: 'x' } })).status).toBe(403);
  });
});

describe('form lifecycle', () => {
  it('PATCH merges settings key by key and null removes a key', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Settings', project: 'lifecycle' } })).json;
    const one = await t.api('PATCH', `/v1/forms/${f.id}`, key, {
      json: { settings: { redirect_url: 'https://example.com/thanks', honeypot_field: 'hp', custom: 'x' } },
    });
    expect(one.status).toBe(200);
    expect(one.json.settings).toEqual({
      redirect_url: 'https://example.com/thanks',
      honeypot_field: 'hp',
      custom: 'x',
    });
    const two = await t.api('PATCH', `/v1/forms/${f.id}`, key, {
      json: { settings: { allowed_origins: ['https://example.com'], redirect_url: null, custom: null } },
    });
    expect(two.status).toBe(200);
    expect(two.json.settings).toEqual({ honeypot_field: 'hp', allowed_origins: ['https://example.com'] });
    const got = await t.api('GET', `/v1/forms/${f.id}`, key);
    expect(got.json.settings).toEqual(two.json.settings);
    const renamed = await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { name: 'Renamed', tags: ['t1'] } });
    expect(renamed.json).toMatchObject({ name: 'Renamed', tags: ['t1'], slug: 'settings' });
    expect(renamed.json.settings).toEqual(two.json.settings);
  });

  it('rejects invalid settings with 422', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Bad settings', project: 'lifecycle' } })).json;
    for (const settings of [
      { redirect_url: 'not a url' },
      { rate_limit: { max: 0, window_s: 60 } },
      { allowed_origins: 'https://x' },
    ]) {
      const r = await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { settings } });
      expect(r.status, JSON.stringify(settings)).toBe(422);
      expect(r.json.error.details.issues[0].path).toMatch(/^settings\./);
    }
    expect((await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { status: 'deleted' } })).status).toBe(422);
  });

  it('never echoes settings.challenge.secret', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Challenge', project: 'lifecycle' } })).json;
    const secret = 'turnstile-secret-0123456789';
    const r = await t.api('PATCH', `/v1/forms/${f.id}`, key, {
      json: { settings: { challenge: { provider: 'turnstile', secret } } },
    });
    expect(r.status).toBe(200);
    expect(r.json.settings.challenge.provider).toBe('turnstile');
    expect(r.text).not.toContain(secret);
    for (const path of [`/v1/forms/${f.id}`, '/v1/forms?limit=200', `/v1/forms/${f.id}/embed`]) {
      const g = await t.api('GET', path, key);
      expect(g.status).toBe(200);
      expect(g.text, path).not.toContain(secret);
    }
    const again = await t.api('POST', '/v1/forms', key, {
      json: { name: 'Challenge', project: 'lifecycle', if_exists: 'return' },
    });
    expect(again.status).toBe(200);
    expect(again.text).not.toContain(secret);
  });

  it('pauses and resumes a form', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Pausable', project: 'lifecycle' } })).json;
    const p = await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { status: 'paused' } });
    expect(p.status).toBe(200);
    expect(p.json.status).toBe('paused');
    expect((await t.api('GET', `/v1/forms/${f.id}`, key)).json.status).toBe('paused');
    const paused = await t.api('GET', '/v1/forms?status=paused&limit=200', key);
    expect(paused.json.data.map((x: { id: string }) => x.id)).toContain(f.id);
    expect((await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { status: 'active' } })).json.status).toBe('active');
    const mode = await t.api('PATCH', `/v1/forms/${f.id}`, key, { json: { schema_mode: 'enforce' } });
    expect(mode.json.schema_mode).toBe('enforce');
  });

  it('GET /v1/forms/{id}/embed returns the snippets with the submit URL', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Embed me', project: 'lifecycle' } })).json;
    const e = await t.api('GET', `/v1/forms/${f.id}/embed`, readKey);
    expect(e.status).toBe(200);
    expect(Object.keys(e.json).sort()).toEqual(['astro', 'fetch', 'html', 'nextjs_action', 'react']);
    for (const v of Object.values(e.json)) expect(v).toContain(f.submit_url);
  });

  it('DELETE removes the form: then 404 on GET, PATCH, DELETE and embed', async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Doomed', project: 'lifecycle' } })).json;
    const d = await t.api('DELETE', `/v1/forms/${f.id}`, key);
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    for (const [m, p] of [
      ['GET', `/v1/forms/${f.id}`],
      ['PATCH', `/v1/forms/${f.id}`],
      ['DELETE', `/v1/forms/${f.id}`],
      ['GET', `/v1/forms/${f.id}/embed`],
    ]) {
      const r = await t.api(m, p, key, m === 'PATCH' ? { json: { name: 'x' } } : {});
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.json.error.code).toBe('not_found');
    }
    const list = await t.api('GET', '/v1/forms?limit=200', key);
    expect(list.text).not.toContain(f.id);
  });

  it("answers 404 for another organization's form on GET, PATCH, DELETE and embed", async () => {
    const f = (await t.api('POST', '/v1/forms', key, { json: { name: 'Private', project: 'lifecycle' } })).json;
    for (const [m, p] of [
      ['GET', `/v1/forms/${f.id}`],
      ['PATCH', `/v1/forms/${f.id}`],
      ['DELETE', `/v1/forms/${f.id}`],
      ['GET', `/v1/forms/${f.id}/embed`],
    ]) {
      const r = await t.api(m, p, otherKey, m === 'PATCH' ? { json: { name: 'stolen' } } : {});
      expect(r.status, `${m} ${p}`).toBe(404);
      expect(r.json.error.code).toBe('not_found');
      expect(r.text).not.toContain('Private');
    }
    const mine = await t.api('GET', `/v1/forms/${f.id}`, key);
    expect(mine.json.name).toBe('Private');
    const theirs = await t.api('GET', '/v1/forms?limit=200', otherKey);
    expect(theirs.text).not.toContain(f.id);
    // Another organization may use the same project and slug.
    const same = await t.api('POST', '/v1/forms', otherKey, { json: { name: 'Private', project: 'lifecycle' } });
    expect(same.status).toBe(201);
  });
});

describe('GET /v1/forms', () => {
  it('filters by ?project= (id or slug) and ?tag=', async () => {
    const x = (await t.api('POST', '/v1/forms', key, { json: { name: 'X', project: 'filter-a', tags: ['red'] } })).json;
    const y = (
      await t.api('POST', '/v1/forms', key, { json: { name: 'Y', project: 'filter-a', tags: ['blue', 'red'] } })
    ).json;
    const z = (await t.api('POST', '/v1/forms', key, { json: { name: 'Z', project: 'filter-b', tags: ['blue'] } }))
      .json;
    const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((f) => f.id);
    expect(ids(await t.api('GET', '/v1/forms?project=filter-a', key))).toEqual([y.id, x.id]);
    expect(ids(await t.api('GET', `/v1/forms?project=${z.project_id}`, key))).toEqual([z.id]);
    expect(ids(await t.api('GET', '/v1/forms?project=filter-a&tag=blue', key))).toEqual([y.id]);
    const blue = ids(await t.api('GET', '/v1/forms?tag=blue&limit=200', key));
    expect(blue).toContain(y.id);
    expect(blue).toContain(z.id);
    expect(blue).not.toContain(x.id);
    expect(ids(await t.api('GET', '/v1/forms?project=no-such-project', key))).toEqual([]);
    expect(ids(await t.api('GET', '/v1/forms?tag=red', otherKey))).toEqual([]);
    const listed = (await t.api('GET', '/v1/forms?project=filter-a', key)).json.data[0];
    expect(listed).toMatchObject({ submit_url: `${BASE}/s/${y.id}`, counts: { submissions: 0 } });
    expect(listed).not.toHaveProperty('embed');
  });

  it('pages with limit and cursor; rejects a bad cursor and limit=500', async () => {
    for (let i = 0; i < 3; i += 1) await t.api('POST', '/v1/forms', key, { json: { name: `P${i}`, project: 'paged' } });
    const p1 = await t.api('GET', '/v1/forms?project=paged&limit=2', key);
    expect(p1.json.data).toHaveLength(2);
    expect(p1.json.next_cursor).toBeTruthy();
    const p2 = await t.api('GET', `/v1/forms?project=paged&limit=2&cursor=${p1.json.next_cursor}`, key);
    expect(p2.json.data).toHaveLength(1);
    expect(p2.json.next_cursor).toBeNull();
    expect((await t.api('GET', '/v1/forms?cursor=garbage', key)).status).toBe(422);
    expect((await t.api('GET', '/v1/forms?limit=500', key)).status).toBe(422);
    expect((await t.api('GET', '/v1/forms?status=gone', key)).status).toBe(422);
  });
});

describe('plan limits', () => {
  it('answers 402 plan_limit_reached over the forms limit', async () => {
    const small = await startTestApp({ DEFAULT_PLAN: 'free', PLAN_LIMITS: JSON.stringify({ free: { forms: 1 } }) });
    try {
      const a = await small.onboard();
      const first = await small.api('POST', '/v1/forms', a.key, { json: { name: 'Only' } });
      expect(first.status).toBe(201);
      const second = await small.api('POST', '/v1/forms', a.key, { json: { name: 'One too many' } });
      expect(second.status).toBe(402);
      expect(second.json.error.code).toBe('plan_limit_reached');
      expect(second.json.error.hint).toMatch(/\/v1\/me/);
      // Returning the existing form is not a new form.
      const again = await small.api('POST', '/v1/forms', a.key, { json: { name: 'Only', if_exists: 'return' } });
      expect(again.status).toBe(200);
      // Deleting frees the slot.
      expect((await small.api('DELETE', `/v1/forms/${first.json.id}`, a.key)).status).toBe(204);
      expect((await small.api('POST', '/v1/forms', a.key, { json: { name: 'Replacement' } })).status).toBe(201);
    } finally {
      await small.close();
    }
  });
});
