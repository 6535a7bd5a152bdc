import { describe, expect, it } from 'vitest';
import { canonicalOrigin, originAllowed } from '../../server/domain/checks.js';
import { parseSubmission } from '../../server/intake/parse.js';

// JSON and urlencoded bodies never reach the file rules.
const NO_FILES = { orgId: 'org_x', storage: null as never, maxFileBytes: null, maxFiles: 0 };

describe('canonicalOrigin', () => {
  it('answers the same for a value seen before, and for many different values', () => {
    expect(canonicalOrigin('https://Example.COM:443/path?q')).toBe('https://example.com');
    expect(canonicalOrigin('https://Example.COM:443/path?q')).toBe('https://example.com');
    expect(canonicalOrigin('ftp://example.com')).toBeNull();
    expect(canonicalOrigin('ftp://example.com')).toBeNull();
    expect(canonicalOrigin('not a url')).toBeNull();
    for (let i = 0; i < 1200; i += 1)
      expect(canonicalOrigin(`http://h${i}.example:8080/x`)).toBe(`http://h${i}.example:8080`);
    const long = `https://long.example/${'a'.repeat(500)}`;
    expect(canonicalOrigin(long)).toBe('https://long.example');
    expect(canonicalOrigin(long)).toBe('https://long.example');
    expect(originAllowed(['https://example.com/'], canonicalOrigin('https://example.com'))).toBe(true);
    expect(originAllowed(['https://example.com'], canonicalOrigin('https://other.example'))).toBe(false);
  });
});

const parse = (type: string, body: string) =>
  parseSubmission(new Request('http://x/s/f', { method: 'POST', headers: { 'content-type': type }, body }), NO_FILES);

describe('parsed fields', () => {
  it('keeps a "__proto__" field as a field, in JSON and form bodies alike', async () => {
    const json = await parse('application/json', '{"__proto__": {"polluted": true}, "name": "Ada"}');
    expect(Object.keys(json.fields)).toEqual(['__proto__', 'name']);
    expect(Object.getPrototypeOf(json.fields)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(json.fields))).toEqual(
      JSON.parse('{"__proto__": {"polluted": true}, "name": "Ada"}'),
    );
    const form = await parse('application/x-www-form-urlencoded', '__proto__=a&__proto__=b&name=Ada');
    expect(Object.hasOwn(form.fields, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(form.fields, '__proto__')?.value).toEqual(['a', 'b']);
    expect(Object.getPrototypeOf(form.fields)).toBe(Object.prototype);
  });
});
