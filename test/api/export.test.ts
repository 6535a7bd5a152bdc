import { parse } from 'csv-parse/sync';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createForm, seedAttachment, seedSubmission } from '../helpers/seed.js';
import { tenantApp } from '../helpers/tenant.js';

const { t, key, orgId, readKey, submitKey, otherKey } = await tenantApp({ submit: true });

const exportOf = (formId: string, query = 'format=csv', k = key) =>
  t.api('GET', `/v1/forms/${formId}/submissions/export?${query}`, k);

/** The CSV as a real parser reads it: header and records (objects by column). */
function parseCsv(text: string) {
  const rows: string[][] = parse(text, { bom: true, relax_column_count: false });
  const [head, ...body] = rows;
  return { head, records: body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]]))) };
}

/** What a data value's cell must read, computed here independently of the service. */
function expectedCell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const text =
    typeof v === 'string'
      ? v
      : Array.isArray(v)
        ? v.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('; ')
        : JSON.stringify(v);
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

describe('GET /v1/forms/{id}/submissions/export?format=csv', () => {
  it('is a spreadsheet-safe CSV whose cells match the API’s data', async () => {
    const formId = await createForm(t, key);
    const pub = await t.api('POST', `/v1/forms/${formId}/schema`, key, {
      json: {
        json_schema: {
          type: 'object',
          properties: { name: { type: 'string' }, email: { type: 'string' }, age: { type: 'integer' } },
        },
      },
    });
    expect(pub.status).toBe(201);
    const a = await seedSubmission(t, {
      orgId,
      formId,
      data: {
        zeta: 'first seen',
        email: 'ada@example.com',
        name: 'Ada, "the first"',
        age: 36,
        note: 'line1\r\nline2',
        tags: ['x', 'y;z', { k: 1 }],
        address: { city: 'Paris', zip: '75001' },
        cv: 'fl_placeholder',
      },
    });
    const file = await seedAttachment(t, { orgId, formId, submissionId: a.id, fieldName: 'cv' });
    const b = await seedSubmission(t, {
      orgId,
      formId,
      status: 'quarantined',
      quarantineReason: 'origin_rejected',
      test: true,
      data: {
        name: '=HYPERLINK("https://evil.example","x")',
        plus: '+1',
        minus: '-2+3',
        at: '@SUM(A1)',
        tab: '\tcmd',
        cr: '\rcmd',
        neg: -5,
        inner: 'a=b',
        list: ['=1+1', 'ok'],
        ünï: 'ç’est “quoted” 🎉',
      },
    });

    const r = await exportOf(formId);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    const slug = (await t.api('GET', `/v1/forms/${formId}`, key)).json.slug;
    const day = new Date().toISOString().slice(0, 10);
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="${slug}-${day}.csv"`);
    const raw = await t.app.request(`/v1/forms/${formId}/submissions/export?format=csv`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(
      Buffer.from(await raw.arrayBuffer())
        .subarray(0, 3)
        .toString('hex'),
    ).toBe('efbbbf');
    // Every record ends in CRLF; the only bare LF is the one inside the quoted note.
    expect(r.text.endsWith('\r\n')).toBe(true);
    expect(r.text.replaceAll('\r\n', '').includes('\n')).toBe(false);

    const { head, records } = parseCsv(r.text);
    expect(head).toEqual([
      'id',
      'status',
      'quarantine_reason',
      'received_at',
      'test',
      // the schema's fields in the order published, then the others by first appearance
      'name',
      'email',
      'age',
      ...Object.keys(a.data)
        .filter((k) => !['name', 'email', 'age'].includes(k))
        .sort(),
      ...Object.keys(b.data)
        .filter((k) => k !== 'name')
        .sort(),
      'cv_url',
    ]);
    expect(records.map((x) => x.id)).toEqual([b.id, a.id]);
    for (const rec of records) {
      const api = (await t.api('GET', `/v1/submissions/${rec.id}`, key)).json;
      expect(rec.status).toBe(api.status);
      expect(rec.quarantine_reason).toBe(api.quarantine_reason ?? '');
      expect(rec.received_at).toBe(api.received_at);
      expect(rec.test).toBe(String(api.test));
      for (const field of head.slice(5, -1)) expect(rec[field], field).toBe(expectedCell(api.data[field]));
      expect(rec.cv_url).toBe(api.attachments.map((x: { download_url: string }) => x.download_url).join('; '));
    }
    const byId = Object.fromEntries(records.map((x) => [x.id, x]));
    expect(byId[a.id].cv_url).toBe(`http://127.0.0.1:8787/v1/submissions/${a.id}/attachments/${file.id}`);
    expect(byId[a.id].tags).toBe('x; y;z; {"k":1}');
    expect(JSON.parse(byId[a.id].address)).toEqual({ city: 'Paris', zip: '75001' });
    expect(byId[a.id].note).toBe('line1\r\nline2');
    expect(byId[b.id]).toMatchObject({
      name: `'=HYPERLINK("https://evil.example","x")`,
      plus: "'+1",
      minus: "'-2+3",
      at: "'@SUM(A1)",
      tab: "'\tcmd",
      cr: "'\rcmd",
      neg: '-5',
      inner: 'a=b',
      list: "'=1+1; ok",
      ünï: 'ç’est “quoted” 🎉',
    });
  });

  it('guards header cells against formulas as it guards data cells, file field names included', async () => {
    const formId = await createForm(t, key);
    const hostile = ['=HYPERLINK("http://x.example","y")', "=cmd|' /C calc'!A0", '+cmd', '@key', '-2+3', '\tx'];
    const a = await seedSubmission(t, {
      orgId,
      formId,
      data: Object.fromEntries([...hostile.map((h) => [h, 'v']), ['plain', 'p']]),
    });
    await seedAttachment(t, { orgId, formId, submissionId: a.id, fieldName: '=IMPORTXML(A1)' });
    await seedAttachment(t, { orgId, formId, submissionId: a.id, fieldName: '@file' });
    const r = await exportOf(formId);
    expect(r.status).toBe(200);
    const { head } = parseCsv(r.text);
    expect(head).toEqual(
      expect.arrayContaining([...hostile.map(expectedCell), 'plain', "'=IMPORTXML(A1)_url", "'@file_url"]),
    );
    // No header cell a spreadsheet would run.
    for (const cell of head) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);
  });

  it('takes the list’s filters, and an empty form is the header alone', async () => {
    const formId = await createForm(t, key);
    const empty = await exportOf(formId);
    expect(empty.status).toBe(200);
    // (Response.text() drops the BOM.)
    expect(empty.text).toBe('id,status,quarantine_reason,received_at,test\r\n');
    // A second apart: two rows stored within one millisecond would both be `since` the later one.
    const at = (s: number) => new Date(Date.now() - s * 1000);
    const a = await seedSubmission(t, { orgId, formId, data: { m: 'apple pie' }, receivedAt: at(3) });
    const b = await seedSubmission(t, { orgId, formId, status: 'spam', data: { m: 'banana' }, receivedAt: at(2) });
    const c = await seedSubmission(t, { orgId, formId, test: true, data: { m: 'apple tart' }, receivedAt: at(1) });
    const idsOf = async (query: string) => parseCsv((await exportOf(formId, query)).text).records.map((x) => x.id);
    expect(await idsOf('format=csv')).toEqual([c.id, b.id, a.id]);
    expect(await idsOf('format=csv&status=spam')).toEqual([b.id]);
    expect(await idsOf('format=csv&test=false')).toEqual([b.id, a.id]);
    expect(await idsOf('format=csv&q=APPLE')).toEqual([c.id, a.id]);
    expect(await idsOf(`format=csv&since=${encodeURIComponent(c.receivedAt.toISOString())}`)).toEqual([c.id]);
    // Only matching rows name columns: a filter that matches nothing is the header alone.
    expect((await exportOf(formId, 'format=csv&q=cherry')).text).toBe(
      'id,status,quarantine_reason,received_at,test\r\n',
    );
  });

  it('needs read scope; another organization’s form is 404; a bad format is 422', async () => {
    const formId = await createForm(t, key);
    expect((await exportOf(formId, 'format=csv', readKey)).status).toBe(200);
    const none = await t.api('GET', `/v1/forms/${formId}/submissions/export?format=csv`, null);
    expect(none.status).toBe(401);
    const small = await exportOf(formId, 'format=csv', submitKey);
    expect(small.status).toBe(403);
    expect(small.json.error.code).toBe('forbidden');
    const theirs = await exportOf(formId, 'format=csv', otherKey);
    expect(theirs.status).toBe(404);
    expect(theirs.json.error.code).toBe('not_found');
    for (const q of ['format=xlsx', '']) {
      const bad = await exportOf(formId, q);
      expect(bad.status, q).toBe(422);
      expect(bad.json.error.code).toBe('validation_failed');
    }
  });
});

describe('GET /v1/forms/{id}/submissions/export?format=ndjson', () => {
  it('is one SubmissionDetail per line without deliveries, equal to GET /v1/submissions/{id}', async () => {
    const formId = await createForm(t, key);
    const a = await seedSubmission(t, { orgId, formId, data: { name: 'Ada', nested: { n: 1, l: [1, 'two'] } } });
    await seedAttachment(t, { orgId, formId, submissionId: a.id, fieldName: 'cv' });
    await seedSubmission(t, { orgId, formId, data: { note: 'line1\nline2', 'ü "x"': '\u2028' } });
    const r = await exportOf(formId, 'format=ndjson');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.ndjson"$/);
    const lines = r.text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const o = JSON.parse(line);
      const { deliveries, ...api } = (await t.api('GET', `/v1/submissions/${o.id}`, key)).json;
      expect(deliveries).toBeDefined();
      expect(o).toEqual(api);
    }
  });
});

/** Rows straight into the table (one statement), enough for several export batches. */
async function bulkSeed(formId: string, n: number) {
  await t.deps.database.rows(sql`
    insert into submissions (id, org_id, form_id, status, test, data, spam, meta, client_ip, received_at)
    select 'sb_bulk' || lpad(g::text, 8, '0'), ${orgId}, ${formId}, 'received', false,
      jsonb_build_object('n', g, 'pad', repeat('x', 100)), '{"score":0,"reasons":[]}', '{}', '127.0.0.1', now()
    from generate_series(1, ${n}) g`);
}

/** Counts the selects the app runs (the real database answers them all). */
function countSelects() {
  const db = t.deps.database.db;
  const select = db.select.bind(db);
  let n = 0;
  db.select = ((...args: Parameters<typeof select>) => {
    n += 1;
    return select(...args);
  }) as typeof db.select;
  return { count: () => n, restore: () => (db.select = select) };
}

describe('streaming', () => {
  it('reads rows in batches as the client takes them: rows deleted after the first batch are not exported', async () => {
    const formId = await createForm(t, key);
    await bulkSeed(formId, 3500);
    const res = await t.app.request(`/v1/forms/${formId}/submissions/export?format=ndjson`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value, { stream: true });
    // The whole export would be 3,500 rows; the server has read at most the next batch ahead.
    await t.deps.database.rows(sql`delete from submissions where form_id = ${formId}`);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const lines = text.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(1000);
    expect(lines.length).toBeLessThanOrEqual(2000);
    expect(JSON.parse(lines[0]).id).toBe('sb_bulk00003500');
  });

  it('stops reading rows when the client goes away halfway', async () => {
    const formId = await createForm(t, key);
    await bulkSeed(formId, 5000);
    const res = await t.app.request(`/v1/forms/${formId}/submissions/export?format=csv`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // header
    await reader.read(); // first batch
    const selects = countSelects();
    try {
      await reader.cancel();
      await new Promise((r) => setTimeout(r, 200));
      // At most the batch that was already on its way (rows and their attachments): not the other 3,000 rows.
      expect(selects.count()).toBeLessThanOrEqual(2);
      // The whole export still reads every row in batches.
      const all = await exportOf(formId);
      expect(parseCsv(all.text).records).toHaveLength(5000);
      // (the form, then one query per 1,000 rows: no file field, so no attachment reads)
      expect(selects.count()).toBeGreaterThanOrEqual(2 + 1 + 5);
    } finally {
      selects.restore();
    }
  });
});
