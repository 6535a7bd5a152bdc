import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';

let t: TestEnv;
let key: string;
let formId: string;

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.onboard()).key;
  formId = (await t.api('POST', '/v1/forms', key, { json: { name: 'Matrix' } })).json.id;
});
afterAll(() => t.close());

const JSON_CT = 'application/json';
const FORM_CT = 'application/x-www-form-urlencoded';
const boundary = 'XyZmatrix';
const MP_CT = `multipart/form-data; boundary=${boundary}`;
const mp = (parts: string) => `${parts}--${boundary}--\r\n`;
const part = (name: string, value: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

const deep = (n: number) => {
  let v: unknown = 'x';
  for (let i = 0; i < n; i += 1) v = { a: v };
  return v;
};
const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, 'v']));
const garbage = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919) % 256));

/** [name, content-type, body] */
const CASES: [string, string | undefined, string | Buffer][] = [
  ['json ok', JSON_CT, JSON.stringify({ a: 1 })],
  ['json malformed', JSON_CT, '{"a": 1,'],
  ['json array', JSON_CT, '[1,2]'],
  ['json scalar', JSON_CT, '42'],
  ['json null', JSON_CT, 'null'],
  ['json empty', JSON_CT, ''],
  ['json oversize', JSON_CT, JSON.stringify({ big: 'x'.repeat(300 * 1024) })],
  ['json huge single field', JSON_CT, JSON.stringify({ big: 'x'.repeat(250 * 1024) })],
  ['json too many fields', JSON_CT, JSON.stringify(many(2000))],
  ['json deep nesting', JSON_CT, JSON.stringify(deep(100))],
  ['json unicode keys', JSON_CT, JSON.stringify({ ключ: 'значение', 鍵: '🙂', 'e\u0301': 'x' })],
  ['json null byte in key', JSON_CT, '{"a\\u0000b": 1}'],
  ['json null byte in value', JSON_CT, '{"a": "x\\u0000y"}'],
  ['json lone surrogate', JSON_CT, '{"a": "\\ud800"}'],
  ['json binary garbage', JSON_CT, garbage],
  ['urlencoded ok', FORM_CT, 'a=1&a=2&b=3'],
  ['urlencoded malformed escapes', FORM_CT, 'a=%E0%A4%A&b=%%%'],
  ['urlencoded oversize', FORM_CT, `a=${'x'.repeat(300 * 1024)}`],
  ['urlencoded too many fields', FORM_CT, Array.from({ length: 3000 }, (_, i) => `k${i}=v`).join('&')],
  ['urlencoded null byte', FORM_CT, 'a%00b=1'],
  ['urlencoded binary garbage', FORM_CT, garbage],
  ['multipart ok', MP_CT, mp(part('a', '1') + part('a', '2'))],
  ['multipart no boundary', 'multipart/form-data', mp(part('a', '1'))],
  ['multipart truncated', MP_CT, `--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated`],
  ['multipart garbage', MP_CT, garbage],
  ['multipart huge field', MP_CT, mp(part('a', 'x'.repeat(300 * 1024)))],
  ['text/plain', 'text/plain', 'hello'],
  ['xml', 'application/xml', '<a/>'],
  ['no content type', undefined, 'a=1'],
  ['wrong type for json body', FORM_CT, JSON.stringify({ a: 1 })],
];

async function storedCount(): Promise<number> {
  const rows = await t.deps.database.rows<{ n: string | number }>(
    (await import('drizzle-orm')).sql`select count(*) as n from submissions where form_id = ${formId}`,
  );
  return Number(rows[0].n);
}

describe('bad input to POST /s/{formId}', () => {
  for (const [name, ct, body] of CASES) {
    it(`${name}: never 5xx; stored once on success, nothing on a 4xx`, async () => {
      const before = await storedCount();
      const headers: Record<string, string> = { accept: 'application/json' };
      if (ct) headers['content-type'] = ct;
      const r = await t.request('POST', `/s/${formId}`, {
        body: typeof body === 'string' ? body : new Uint8Array(body),
        headers,
      });
      expect(r.status, r.text).toBeLessThan(500);
      const after = await storedCount();
      if (r.status < 300) {
        expect(after).toBe(before + 1);
        expect(r.json.submission_id).toMatch(/^sb_/);
      } else {
        expect([400, 413, 415]).toContain(r.status);
        expect(r.json.error.code).toBeTruthy();
        expect(r.json.error.hint).toBeTruthy();
        expect(after).toBe(before);
        if (r.status === 413) expect(r.headers.get('connection')).toBe('close');
      }
    });
  }

  it('reads back unicode exactly as sent', async () => {
    const data = { ключ: 'значение', 鍵: '🙂', nested: { é: ['a', 'ß'] } };
    const r = await t.request('POST', `/s/${formId}`, { json: data });
    const s = await t.api('GET', `/v1/submissions/${r.json.submission_id}`, key);
    expect(s.json.data).toEqual(data);
  });
});
