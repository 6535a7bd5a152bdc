import fc from 'fast-check';
import { nulString, oddKey, oddString } from './arbitraries.js';

/**
 * Field values for the /v1 fuzzer: names, slugs, URLs, emails, crons, time zones and timestamps on
 * the edges of validity, the ids of real fixtures, and the helpers that mix in wrong types and keys.
 */

/** Ids the generators pick from; filled by the test once the fixtures exist. */
export const REAL = { forms: ['fm_none'], streams: ['st_none'], destinations: ['ds_none'], projects: ['prj_none'] };

export const anyJson = fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' });
export const garbageId = fc.oneof(
  fc.constantFrom('fm_00000000000000000000000000', 'st_x', 'ds_', '', ' ', '../x', '%00', 'x'.repeat(300)),
  oddString,
);
export const real = (pick: () => string[]) => fc.nat().map((i) => pick()[i % pick().length]);

/** Mostly the valid-ish arbitrary, sometimes any JSON value (a wrong type, null, an object …). */
export const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 15, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: anyJson });

/** Adds one unknown key now and then (contracts are strict: 422). */
export const withExtra = (base: fc.Arbitrary<Record<string, unknown>>) =>
  fc
    .tuple(
      base,
      fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.tuple(oddKey, anyJson) }),
    )
    .map(([o, extra]) => {
      if (!extra) return o;
      const out = { ...o };
      Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, writable: true, configurable: true });
      return out;
    });

export const name = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
  { weight: 4, arbitrary: oddString },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(200), 'x'.repeat(201), '\ufeffBOM first', 'Ünïcödé 🙂') },
  { weight: 1, arbitrary: nulString },
);

export const slug = fc.oneof(
  fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/),
  fc.constantFrom('default', 'a', '-a', 'a--b', 'A', 'x'.repeat(64), 'x'.repeat(65)),
  oddString,
);

export const url = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.constantFrom(
    'http://127.0.0.1:9/h',
    'http://[::1]/',
    'http://169.254.169.254/latest/meta-data',
    'ftp://example.com/x',
    'javascript:alert(1)',
    'https://a..b',
    'http://%zz',
    'https://example.com/\u0000',
    'https://ex ample.com',
    'https://例子.测试/路径?q=🙂',
    'https://user:pass@example.com:65536/',
    `https://example.com/${'x'.repeat(2000)}`,
  ),
  oddString,
);

export const email = fc.oneof(
  fc.emailAddress(),
  fc.constantFrom('a@b', 'a@b.c', ' A@B.CO ', 'a@@b.co', 'ä@ü.de', '"a b"@c.de', `${'x'.repeat(320)}@e.co`),
  oddString,
);

export const cron = fc.oneof(
  fc.constantFrom(
    '* * * * *',
    '0 9 * * *',
    '0 0 31 2 *',
    '0 0 30 2 *',
    '61 * * * *',
    '*/0 * * * *',
    '@yearly',
    '@reboot',
    '0 0 * * 8',
    '0 0 L * *',
    '* * * * * *',
    '* * * * * * *',
    '0 0 29 2 1',
    '0-59/7 * * * *',
    '5,4,3 * * * *',
    '0 0 1 1 * 2099',
  ),
  oddString,
);

export const timezone = fc.oneof(
  fc.constantFrom(
    'UTC',
    'Europe/Berlin',
    'America/St_Johns',
    'Asia/Kathmandu',
    'Pacific/Kiritimati',
    'Etc/GMT+12',
    'Etc/GMT-14',
    '+05:00',
    'Mars/Olympus',
    'utc',
    'EST5EDT',
    'Factory',
    'local',
  ),
  oddString,
);

export const instant = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    null,
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T00:00:60Z',
    '0000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.000Z',
    '9999-12-31T23:59:59.999+14:00',
    '2026-01-01T00:00:00.123456789Z',
    '2026-01-01T00:00:00-00:00',
    '2026-01-01 00:00:00Z',
  ),
  oddString,
);

// ------------------------------------------------------------- near-valid bodies

/** Free text that satisfies min(1): ASCII, graphemes, any code point (NUL included), a few known odd ones. */
export const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('\ufeffBOM first', 'x'.repeat(200), '\ud800', 'a\u0000b', '{{form.name}}') },
);
export const goodSlug = fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}$/);
export const tags = fc.array(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 3 });
export const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });
export const compact = <T extends Record<string, unknown>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as T;
export const goodUrl = fc.oneof(
  fc.webUrl(),
  fc.constantFrom('http://127.0.0.1:9/h', 'http://[::1]/', 'https://例子.测试/路径?q=🙂', 'http://169.254.169.254/'),
);
export const goodEmail = fc.oneof(fc.emailAddress(), fc.constantFrom('A@B.CO', 'ä@ü.de'));
export const validInstant = fc.oneof(
  fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()),
  fc.constantFrom(null, '2026-02-30T00:00:00Z', '2026-01-01T00:00:00+14:00', '9999-12-31T23:59:59.999Z'),
);
/** Keys that can be stored (well-formed, no NUL), still odd: the near-valid bodies use these. */
export const cleanKey = oddKey.map((k) => k.toWellFormed().replaceAll('\u0000', ''));
