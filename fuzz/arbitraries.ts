import fc from 'fast-check';

/** Generators shared by the intake and API fuzzers: odd strings, odd keys, header values. */

const noNul = (s: string) => s.replaceAll('\u0000', '');

/** Single UTF-16 code units, lone surrogates included. */
const codeUnit = fc.integer({ min: 1, max: 0xffff }).map((c) => String.fromCharCode(c));

export const SPECIAL_STRINGS = [
  '',
  ' ',
  '\t\r\n',
  'null',
  'undefined',
  'true',
  '0',
  '-0',
  'NaN',
  '1e400',
  '🙂',
  '👩‍👩‍👧',
  'e\u0301',
  '\u00e9',
  '\u202egnp.exe',
  '\ufeff',
  '\ud800',
  '\udfff',
  'a\ud83d',
  '\uffff',
  '<script>alert(1)</script>',
  "'; drop table submissions; --",
  '{{form.name}}',
  '$1 $& $`',
  '%00',
  '%',
  '\\u0000',
  'x'.repeat(2000),
];

/** A string that never holds NUL (those are tested on purpose, rarely). */
export const oddString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }).map(noNul) },
  { weight: 1, arbitrary: fc.string({ unit: codeUnit, maxLength: 6 }) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
);

export const nulString = fc.constantFrom('a\u0000b', '\u0000', 'x\u0000');

export const SPECIAL_KEYS = [
  '',
  ' ',
  '_',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '$file',
  '$ref',
  'a.b',
  'a[b]',
  'a[]',
  '0',
  '-1',
  'email',
  'name',
  'message',
  'website',
  'cf-turnstile-response',
  '_test',
  '_gotcha',
  '_redirect',
  '_idempotency',
  '_subject',
  '_other',
  '鍵',
  '🙂',
  '\ud800',
  '\udc00',
  'k'.repeat(256),
];

export const oddKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SPECIAL_KEYS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 2, arbitrary: oddString },
  { weight: 1, arbitrary: fc.constant('k'.repeat(257)) },
);

/** Values of control fields, as a browser or a script might send them. */
export const controlValue = fc.oneof(
  fc.constantFrom<unknown>(true, false, 'true', 'TRUE', 'yes', 'on', '1', 1, 0, '', null, 'no', ['true', 'x'], []),
  oddString,
);

/** Idempotency keys: mostly none, sometimes from a small pool (so replays happen), sometimes garbage. */
export const idemPool = fc.constantFrom('k1', 'k2', 'k3', ' k1 ', 'K1');

/** Latin-1 header values (what Fetch allows: no NUL, CR or LF). */
export const headerValue = fc.oneof(
  fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((s) => s.replace(/[\0\r\n]/g, '')),
  fc.constantFrom('', ' ', 'null', 'undefined', '*', 'x'.repeat(300), 'é', '\u00ff\u00fe'),
);

export const originValue = fc.oneof(
  fc.constantFrom(
    'https://ok.example',
    'https://OK.example:443/',
    'https://ok.example.evil.test',
    'http://ok.example',
    'null',
    'file://',
    'javascript:alert(1)',
    'https://[::1]',
    'https://xn--e1afmkfd.xn--p1ai',
    'https://user:pass@ok.example',
  ),
  fc.webUrl(),
  headerValue,
);

export const forwardedFor = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.constantFrom('::ffff:10.0.0.1', '1.2.3.4, 5.6.7.8', 'unknown', '999.1.1.1', ''),
  headerValue,
);

/** Optional headers of a submission: Origin, Referer, Idempotency-Key, X-Forwarded-For, UA, country. */
export const submitHeaders = fc.record(
  {
    origin: originValue,
    referer: fc.oneof(fc.webUrl(), headerValue),
    'idempotency-key': fc.oneof({ weight: 2, arbitrary: idemPool }, { weight: 1, arbitrary: headerValue }),
    'x-forwarded-for': forwardedFor,
    'cf-connecting-ip': forwardedFor,
    'user-agent': headerValue,
    'cf-ipcountry': fc.oneof(fc.constantFrom('DE', 'de', 'XX', 'T1'), headerValue),
  },
  { requiredKeys: [] },
);

/** The normalized value a Fetch Headers object holds for a raw value (leading/trailing whitespace trimmed). */
export function headerAsSeen(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return new Headers({ x: value }).get('x') ?? undefined;
}

/** A path segment made of anything (lone surrogates become U+FFFD first: they cannot be encoded). */
export const pathSegment = oddString.map((s) => encodeURIComponent(s.toWellFormed()));
