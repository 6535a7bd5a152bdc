import { describe, expect, it } from 'vitest';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, readKey, otherKey } = await tenantApp();

describe('projects', () => {
  it('creates, reads, updates, lists and deletes a project', async () => {
    const created = await t.api('POST', '/v1/projects', key, { json: { name: 'Website', slug: 'website' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ slug: 'website', name: 'Website', tags: [] });
    expect(created.json.id).toMatch(/^prj_/);
    expect(created.json.created_at).toMatch(/Z$/);
    const id = created.json.id;
    expect((await t.api('GET', `/v1/projects/${id}`, key)).json.name).toBe('Website');
    const patched = await t.api('PATCH', `/v1/projects/${id}`, key, { json: { name: 'Site', tags: ['web'] } });
    expect(patched.json).toMatchObject({ name: 'Site', tags: ['web'], slug: 'website' });
    const list = await t.api('GET', '/v1/projects', key);
    expect(list.json.data.map((p: { id: string }) => p.id)).toContain(id);
    expect((await t.api('DELETE', `/v1/projects/${id}`, key)).status).toBe(204);
    expect((await t.api('GET', `/v1/projects/${id}`, key)).status).toBe(404);
  });

  it('answers 409 conflict on a duplicate slug, and the existing project with if_exists return', async () => {
    const a = await t.api('POST', '/v1/projects', key, { json: { name: 'Dup', slug: 'dup' } });
    const b = await t.api('POST', '/v1/projects', key, { json: { name: 'Dup', slug: 'dup' } });
    expect(b.status).toBe(409);
    expect(b.json.error).toMatchObject({ code: 'conflict' });
    expect(b.json.error.hint).toMatch(/if_exists/);
    const c = await t.api('POST', '/v1/projects', key, { json: { name: 'Dup', slug: 'dup', if_exists: 'return' } });
    expect(c.status).toBe(200);
    expect(c.json.id).toBe(a.json.id);
  });

  it('refuses to delete a project that still holds forms', async () => {
    const p = await t.api('POST', '/v1/projects', key, { json: { name: 'Busy', slug: 'busy' } });
    await t.api('POST', '/v1/forms', key, { json: { name: 'F', project: 'busy' } });
    const del = await t.api('DELETE', `/v1/projects/${p.json.id}`, key);
    expect(del.status).toBe(409);
    expect(del.json.error.code).toBe('conflict');
  });

  it('paginates with stable cursors and validates limit and cursor', async () => {
    for (let i = 0; i < 5; i += 1) await t.api('POST', '/v1/projects', key, { json: { name: `Page ${i}` } });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : '';
      const r = await t.api('GET', `/v1/projects?limit=2${q}`, key);
      expect(r.status).toBe(200);
      expect(r.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.json.data.map((p: { id: string }) => p.id));
      cursor = r.json.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect((await t.api('GET', '/v1/projects?limit=201', key)).status).toBe(422);
    expect((await t.api('GET', '/v1/projects?limit=0', key)).status).toBe(422);
    const bad = await t.api('GET', '/v1/projects?cursor=nonsense', key);
    expect(bad.status).toBe(422);
    expect(bad.json.error.details.issues[0].path).toBe('cursor');
  });

  it('keeps tenants apart and enforces scopes', async () => {
    const p = await t.api('POST', '/v1/projects', key, { json: { name: 'Mine' } });
    expect((await t.api('GET', `/v1/projects/${p.json.id}`, otherKey)).status).toBe(404);
    expect((await t.api('PATCH', `/v1/projects/${p.json.id}`, otherKey, { json: { name: 'x' } })).status).toBe(404);
    expect((await t.api('DELETE', `/v1/projects/${p.json.id}`, otherKey)).status).toBe(404);
    const list = await t.api('GET', '/v1/projects?limit=200', otherKey);
    expect(list.text).not.toContain(p.json.id);
    expect((await t.api('GET', '/v1/projects', null)).status).toBe(401);
    const ro = await t.api('POST', '/v1/projects', readKey, { json: { name: 'nope' } });
    expect(ro.status).toBe(403);
    expect(ro.json.error.code).toBe('forbidden');
    expect((await t.api('GET', '/v1/projects', readKey)).status).toBe(200);
  });

  it('rejects unknown fields on a strict body with 422 and the issues', async () => {
    const r = await t.api('POST', '/v1/projects', key, { json: { name: 'x', color: 'red' } });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe('validation_failed');
    expect(r.json.error.details.issues.length).toBeGreaterThan(0);
  });
});
