import { afterAll, describe, expect, it } from 'vitest';
import { stopPatternWorker, tenantPattern, withPatternBudget } from '../../server/schemas/patterns.js';

afterAll(() => stopPatternWorker());

// Values that make a backtracking engine run for hours (2^40 paths) or seconds (quadratic scans).
const evil = `${'a'.repeat(40)}!`;
const long = 'a'.repeat(256 * 1024);

describe('tenant patterns', () => {
  it('matches like a u-flag RegExp, on both the linear and the worker path', () => {
    const cases: [string, string, boolean][] = [
      ['^[a-z]+@example\\.com$', 'ada@example.com', true],
      ['^[a-z]+@example\\.com$', 'Ada@example.com', false],
      ['\\d{5}', 'zip 75001', true],
      // astral values and \p{…} classes go to the worker, which keeps the u flag's meaning
      ['^.$', '😀', true],
      ['^\\p{L}+$', 'Zoë', true],
      ['^\\p{L}+$', 'Zoë1', false],
      ['^[😀-😂]$', '😁', true],
      // lookaround and backreferences are beyond the linear engine: the worker again
      ['^(?=.*\\d)(?=.*[A-Z]).{8,}$', 'Secret123', true],
      ['^(?=.*\\d)(?=.*[A-Z]).{8,}$', 'secret123', false],
      ['^(\\w)\\1$', 'aa', true],
      ['^(\\w)\\1$', 'ab', false],
    ];
    for (const [source, value, expected] of cases) {
      expect(tenantPattern(source).test(value), `${source} on ${value}`).toBe(expected);
      expect(new RegExp(source, 'u').test(value)).toBe(expected);
    }
  });

  it('throws on a pattern that does not compile, as RegExp does', () => {
    expect(() => tenantPattern('(')).toThrow(SyntaxError);
    expect(() => tenantPattern('\\p{Nope}')).toThrow(SyntaxError);
  });

  it('answers a catastrophic pattern without backtracking through it', () => {
    // Linear path: no lookaround, no u-only construct, a surrogate-free value.
    expect(tenantPattern('^(a+)+$').test(evil)).toBe(false);
    expect(tenantPattern('^(a+)+$').test('aaaa')).toBe(true);
    expect(tenantPattern('a*b').test(long)).toBe(false);
    expect(tenantPattern('(a|aa)*c').test(long)).toBe(false);
  });

  it('counts a worker test that runs past its budget as no match, and the next test still works', () => {
    const slow = tenantPattern('^(?=x?)(a+)+$'); // the lookahead keeps it off the linear engine
    expect(slow.test('aaa')).toBe(true);
    expect(slow.test(evil)).toBe(false);
    expect(slow.test('aaaa')).toBe(true);
    // Within one budget, once it is spent the rest are not even tried.
    const spent = withPatternBudget(20, () => [slow.test(evil), slow.test('aaaa')]);
    expect(spent).toEqual([false, false]);
  });

  it('keys each pattern by its source and flags, as ajv caches them by toString()', () => {
    expect(String(tenantPattern('^a$'))).toBe('/^a$/u');
    expect(tenantPattern('^a$')).toBe(tenantPattern('^a$'));
  });
});
