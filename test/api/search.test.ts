import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { indexSearchBatch } from '../../server/worker/search-index.js';
import { until } from '../helpers/receiver.js';
import { createForm, seedSubmission } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, orgId, otherKey, otherOrgId } = await tenantApp();

/** A word nobody else in this file writes. */
const word = () =>
  `zq${crypto
    .randomUUID()
    .replace(/[^a-f]/g, '')
    .slice(0, 10)}`;
const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((s) => s.id);
const search = (q: string, extra = '', k = key) =>
  t.api('GET', `/v1/submissions?q=${encodeURIComponent(q)}${extra}`, k);

describe('GET /v1/submissions?q=', () => {
  it('matches every word case-insensitively in strings at any depth, numbers as written, and the id; newest first', async () => {
    const formId = await createForm(t, key);
    const w1 = word();
    const w2 = word();
    const nested = await seedSubmission(t, { orgId, formId, data: { contact: { note: `Met ${w1.toUpperCase()}x` } } });
    const inArray = await seedSubmission(t, { orgId, formId, data: { tags: ['a', `${w1}-${w2}`] } });
    const split = await seedSubmission(t, { orgId, formId, data: { a: w1, b: { c: [w2] } } });
    await seedSubmission(t, { orgId, formId, data: { a: w2 } });
    const num = await seedSubmission(t, { orgId, formId, data: { amount: 98765.4321, code: w2, flag: true } });

    expect(ids(await search(w1))).toEqual([split.id, inArray.id, nested.id]);
    expect(ids(await search(`${w2.toUpperCase()} ${w1}`))).toEqual([split.id, inArray.id]);
    expect(ids(await search(`${w2} 98765.4321`))).toEqual([num.id]);
    // Booleans and keys are not values that are searched.
    expect(ids(await search(`${w2} true`))).toEqual([]);
    expect(ids(await search(`${w2} amount`))).toEqual([]);
    expect(ids(await search(nested.id))).toEqual([nested.id]);
    expect(ids(await search(nested.id.slice(-12).toUpperCase()))).toEqual([nested.id]);
  });

  it('combines with form, status, test and time filters, and pages with cursors', async () => {
    const f1 = await createForm(t, key);
    const f2 = await createForm(t, key);
    const w = word();
    const a = await seedSubmission(t, { orgId, formId: f1, data: { m: w } });
    const spam = await seedSubmission(t, { orgId, formId: f1, status: 'spam', data: { m: w } });
    const test = await seedSubmission(t, { orgId, formId: f1, test: true, data: { m: w } });
    const other = await seedSubmission(t, { orgId, formId: f2, data: { m: w } });
    expect(ids(await search(w))).toEqual([other.id, test.id, spam.id, a.id]);
    expect(ids(await search(w, `&form_id=${f1}`))).toEqual([test.id, spam.id, a.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f1}/submissions?q=${w}&status=spam`, key))).toEqual([spam.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f1}/submissions?q=${w}&test=false`, key))).toEqual([spam.id, a.id]);
    expect(ids(await t.api('GET', `/v1/forms/${f1}/submissions?q=${w}&test=true`, key))).toEqual([test.id]);
    expect(ids(await search(w, `&until=${encodeURIComponent(a.receivedAt.toISOString())}`))).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await search(w, `&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      seen.push(...ids(r));
      cursor = r.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual([other.id, test.id, spam.id, a.id]);
  });

  it('never finds another organization’s submissions; another organization’s form is 404', async () => {
    const w = word();
    const theirs = await createForm(t, otherKey);
    await seedSubmission(t, { orgId: otherOrgId, formId: theirs, data: { m: w } });
    expect(ids(await search(w))).toEqual([]);
    expect(ids(await search(w, '', otherKey))).toHaveLength(1);
    const r = await t.api('GET', `/v1/forms/${theirs}/submissions?q=${w}`, key);
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('not_found');
  });

  it('bad q: only punctuation matches nothing, LIKE characters are literal, over 1,000 characters is 422', async () => {
    const formId = await createForm(t, key);
    await seedSubmission(t, { orgId, formId, data: { m: '100% _sure_ !!!' } });
    for (const q of ['!!!', '%', '_', '"\'\\']) {
      const r = await search(q, `&form_id=${formId}`);
      expect(r.status, q).toBe(200);
      expect(ids(r), q).toEqual([]);
    }
    // A blank q is no filter at all (an empty search box).
    expect(ids(await search('  ', `&form_id=${formId}`))).toHaveLength(1);
    const long = await search('a'.repeat(10_000));
    expect(long.status).toBe(422);
    expect(long.json.error).toMatchObject({ code: 'validation_failed' });
    expect(long.json.error.details.issues[0].path).toContain('q');
  });
});

describe('GET /v1/submissions?email=', () => {
  it('finds the address in any field of any form, case-insensitively and trimmed; not a substring of another address', async () => {
    const w = word();
    const f1 = await createForm(t, key);
    const f2 = await createForm(t, key);
    const a = await seedSubmission(t, { orgId, formId: f1, data: { email: `Ada_${w}@Example.com` } });
    const b = await seedSubmission(t, { orgId, formId: f2, data: { contact: { reply: [` ada_${w}@example.com `] } } });
    await seedSubmission(t, { orgId, formId: f2, data: { email: `adax${w}@example.com` } });
    await seedSubmission(t, { orgId, formId: f2, data: { email: `grace.ada_${w}@example.com` } });
    await seedSubmission(t, { orgId, formId: f2, data: { note: `write to ada_${w}@example.com today` } });
    const r = await t.api('GET', `/v1/submissions?email=${encodeURIComponent(`  ADA_${w}@EXAMPLE.COM `)}`, key);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([b.id, a.id]);
    expect(ids(await t.api('GET', `/v1/submissions?email=ada_${w}@example.com&form_id=${f1}`, key))).toEqual([a.id]);
    expect(ids(await t.api('GET', `/v1/submissions?email=ada_${w}@example.com`, otherKey))).toEqual([]);
  });

  it('answers 422 when email is not an address', async () => {
    for (const email of ['not-an-address', '', 'a@']) {
      const r = await t.api('GET', `/v1/submissions?email=${encodeURIComponent(email)}`, key);
      expect(r.status, email).toBe(422);
      expect(r.json.error.code).toBe('validation_failed');
      expect(r.json.error.hint).toBeTruthy();
    }
  });
});

describe('the search index, written off the intake path', () => {
  const textOf = async (id: string) =>
    (
      await t.deps.database.rows<{ search_text: string | null }>(
        sql`select search_text from submissions where id = ${id}`,
      )
    )[0].search_text;

  it('stores a submission without its search text; the indexer writes it; q finds the row before and after', async () => {
    const formId = await createForm(t, key);
    const w = word();
    const s = await seedSubmission(t, { orgId, formId, data: { who: { name: `Ada ${w.toUpperCase()}` }, n: [42.5] } });
    expect(await textOf(s.id)).toBeNull();
    expect(ids(await search(`${w} ada 42.5`))).toEqual([s.id]);
    expect(ids(await search(w, '', otherKey))).toEqual([]);

    let written = 0;
    for (let n = await indexSearchBatch(t.deps.database, 50); n > 0; n = await indexSearchBatch(t.deps.database, 50)) {
      written += n;
    }
    expect(written).toBeGreaterThan(0);
    const text = await textOf(s.id);
    expect(text?.startsWith(`${s.id} [`)).toBe(true);
    expect(text).toContain(`"ada ${w}"`);
    expect(text).toContain('42.5');
    expect(ids(await search(`${w} ada 42.5`))).toEqual([s.id]);
    expect(ids(await search(`${w} nobody`))).toEqual([]);
    expect(ids(await search(w, '', otherKey))).toEqual([]);
    // Nothing is left for the indexer.
    expect(await indexSearchBatch(t.deps.database)).toBe(0);
  });

  it('finds indexed and not yet indexed rows together, newest first', async () => {
    const formId = await createForm(t, key);
    const w = word();
    const old = await seedSubmission(t, { orgId, formId, data: { m: w } });
    while ((await indexSearchBatch(t.deps.database)) > 0);
    const fresh = await seedSubmission(t, { orgId, formId, data: { m: `${w}!` } });
    expect(await textOf(old.id)).not.toBeNull();
    expect(await textOf(fresh.id)).toBeNull();
    expect(ids(await search(w))).toEqual([fresh.id, old.id]);
  });

  it('is written by the worker on its own tick', async () => {
    const formId = await createForm(t, key);
    const s = await seedSubmission(t, { orgId, formId, data: { m: word() } });
    await t.startWorker();
    await until('search text written', async () => (await textOf(s.id)) !== null, 10_000);
    expect(await textOf(s.id)).toContain(s.id);
  });
});
