import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestEnv } from '../helpers/app.js';

/** Regressions found by the bad-input fuzzer (npm run test:fuzz): bodies that were stored wrong or crashed. */

let t: TestEnv;
let key: string;
let formId: string;
const crashes: unknown[] = [];
const onCrash = (err: unknown) => crashes.push(err);

beforeAll(async () => {
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  t = await startTestApp();
  key = (await t.onboard()).key;
  formId = (await t.api('POST', '/v1/forms', key, { json: { name: 'Edges' } })).json.id;
});
afterAll(async () => {
  process.off('uncaughtException', onCrash);
  process.off('unhandledRejection', onCrash);
  await t.close();
});

const B = 'edge-boundary';
const MP = { 'content-type': `multipart/form-data; boundary=${B}`, accept: 'application/json' };
const field = (disposition: string, value: string) =>
  `--${B}\r\nContent-Disposition: form-data${disposition}\r\n\r\n${value}\r\n`;
const file = (disposition: string, value: string) =>
  `--${B}\r\nContent-Disposition: form-data${disposition}\r\nContent-Type: text/plain\r\n\r\n${value}\r\n`;
const multipart = (...parts: string[]) => new TextEncoder().encode(`${parts.join('')}--${B}--\r\n`);

async function post(body: Uint8Array | string, headers: Record<string, string>) {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return t.request('POST', `/s/${formId}`, { body: bytes, headers });
}

async function stored(submissionId: string) {
  const r = await t.api('GET', `/v1/submissions/${submissionId}`, key);
  expect(r.status).toBe(200);
  return r.json;
}

describe('intake parsing edges', () => {
  it('keeps a nested "__proto__" key as data (it used to set the prototype and vanish)', async () => {
    const r = await post('{"a":{"__proto__":{"x":1},"b":2}}', { 'content-type': 'application/json' });
    expect(r.status).toBe(200);
    const s = await stored(r.json.submission_id);
    expect(Object.getOwnPropertyDescriptor(s.data.a, '__proto__')?.value).toEqual({ x: 1 });
    expect(s.data.a.b).toBe(2);
  });

  it('refuses a number beyond the double range with 400 (it was stored as null)', async () => {
    const r = await post('{"n":1e400}', { 'content-type': 'application/json' });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe('bad_request');
    expect(r.json.error.message).toMatch(/number/);
  });

  it('stores a multipart part with an empty or missing name under "" (it was "undefined")', async () => {
    const r = await post(multipart(field('; name=""', 'empty'), field('', 'none')), MP);
    expect(r.status, r.text).toBe(200);
    expect((await stored(r.json.submission_id)).data).toEqual({ '': ['empty', 'none'] });
  });

  it('stores a file part with an empty name (it was a 500: field_name null)', async () => {
    const r = await post(multipart(file('; name=""; filename="a.txt"', 'hello')), MP);
    expect(r.status, r.text).toBe(200);
    const s = await stored(r.json.submission_id);
    expect(s.data).toEqual({ '': r.json.attachments[0].id });
    expect(s.attachments).toMatchObject([{ field_name: '', filename: 'a.txt', size_bytes: 5 }]);
  });

  it('reads multipart names and filenames as UTF-8, as browsers send them (they were latin1)', async () => {
    const r = await post(
      multipart(field('; name="ключ"', 'значение'), file('; name="résumé"; filename="résumé.pdf"', 'x')),
      MP,
    );
    expect(r.status, r.text).toBe(200);
    const s = await stored(r.json.submission_id);
    expect(s.data).toEqual({ ключ: 'значение', résumé: r.json.attachments[0].id });
    expect(s.attachments[0]).toMatchObject({ field_name: 'résumé', filename: 'résumé.pdf' });
  });

  it('keeps a field named "$file" as sent (a file placeholder used to swallow it and the whole body)', async () => {
    const text = await post(multipart(field('; name="$file"', ''), field('; name="b"', '1')), MP);
    expect(text.status, text.text).toBe(200);
    expect((await stored(text.json.submission_id)).data).toEqual({ $file: '', b: '1' });
    const withFile = await post(multipart(file('; name="$file"; filename="f.txt"', 'x')), MP);
    expect(withFile.status, withFile.text).toBe(200);
    expect((await stored(withFile.json.submission_id)).data).toEqual({ $file: withFile.json.attachments[0].id });
  });

  it('takes no idempotency key from a file part named "_idempotency" (its fresh fl_ id was the key)', async () => {
    const body = multipart(file('; name="_idempotency"; filename="k.txt"', ''), field('; name="a"', '1'));
    const first = await post(body, MP);
    const again = await post(body, MP);
    expect(first.status, first.text).toBe(200);
    expect(again.status, again.text).toBe(200);
    expect(again.json.idempotent).toBeUndefined();
    expect(again.json.submission_id).not.toBe(first.json.submission_id);
    const s = await stored(first.json.submission_id);
    expect(s.data).toEqual({ a: '1' });
    expect(s.attachments.map((a: { field_name: string }) => a.field_name)).toEqual(['_idempotency']);
    // A text value beside the file is the key, wherever the file part stands.
    const keyed = multipart(
      file('; name="_idempotency"; filename="k.txt"', 'x'),
      field('; name="_idempotency"', 'k-1'),
    );
    const one = await post(keyed, MP);
    const two = await post(keyed, MP);
    expect(two.json.idempotent).toBe(true);
    expect(two.json.submission_id).toBe(one.json.submission_id);
  });

  it('counts a honeypot as filled when any of its values is', async () => {
    const r = await post(multipart(field('; name="_gotcha"', ''), field('; name="_gotcha"', 'bot')), MP);
    expect(r.json.status).toBe('spam');
    const f = await post(multipart(file('; name="_gotcha"; filename="x.txt"', '')), MP);
    expect(f.json.status).toBe('spam');
    const empty = await post(multipart(field('; name="_gotcha"', ''), field('; name="a"', '1')), MP);
    expect(empty.json.status).toBe('received');
  });

  it('answers 400 to a multipart body that ends inside a file, without an uncaught exception', async () => {
    const whole = multipart(file('; name="f"; filename="a.txt"', 'x'.repeat(64)));
    const content = Buffer.from(whole).indexOf('xxxx');
    for (const cut of [1, 20, content, content + 10, whole.length - 10]) {
      const body = whole.subarray(0, cut);
      const r = await post(body, MP);
      expect(r.status, `cut at ${cut}: ${r.text}`).toBe(400);
      expect(r.json.error.code).toBe('bad_request');
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // a late 'error' event would land here
    expect(crashes).toEqual([]);
  });
});
