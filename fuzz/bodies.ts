import fc from 'fast-check';
import { controlValue, idemPool, nulString, oddKey, oddString } from './arbitraries.js';

/**
 * Submission bodies as bytes, with enough structure kept to know what was meant: JSON texts written
 * by our own serializer (duplicate keys, raw number literals, odd whitespace and escapes, a BOM),
 * urlencoded in several percent-encoding styles, and multipart with odd boundaries and filenames.
 */

// ---------------------------------------------------------------- JSON

/** A JSON value as a tree: objects keep duplicate keys, numbers may be raw literals. */
export type JNode = string | boolean | null | { num: string } | { obj: [string, JNode][] } | { arr: JNode[] };

const RAW_NUMBERS = [
  '0',
  '-0',
  '0.0',
  '-0.0e-0',
  '1E+2',
  '1e400',
  '-1e400',
  '1e-400',
  '5e-324',
  '1.7976931348623157e308',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.1',
  '3.141592653589793238462643383279',
];

const numberLiteral = fc.oneof(
  fc.constantFrom(...RAW_NUMBERS),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
);

const leaf: fc.Arbitrary<JNode> = fc.oneof(
  { weight: 4, arbitrary: oddString },
  { weight: 2, arbitrary: numberLiteral.map((num) => ({ num })) },
  { weight: 1, arbitrary: fc.constantFrom<JNode>(true, false, null) },
);

const tree = fc.letrec<{ node: JNode; obj: { obj: [string, JNode][] }; arr: { arr: JNode[] } }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('obj'), tie('arr')),
  obj: fc.array(fc.tuple(oddKey, tie('node')), { maxLength: 5 }).map((obj) => ({ obj })),
  arr: fc.array(tie('node'), { maxLength: 4 }).map((arr) => ({ arr })),
}));

/** n levels of alternating objects and arrays around a leaf: the depth limit is 16. */
const deep = fc.tuple(fc.integer({ min: 12, max: 20 }), leaf).map(([n, v]) => {
  let node: JNode = v;
  for (let i = 0; i < n; i += 1) node = i % 2 ? { arr: [node] } : { obj: [['d', node]] };
  return node;
});

/** Flat objects around the 500-field limit. */
const wide = fc
  .integer({ min: 490, max: 510 })
  .map((n): JNode => ({ obj: Array.from({ length: n }, (_, i): [string, JNode] => [`f${i}`, String(i)]) }));

const controlEntry = fc.tuple(
  fc.constantFrom('_test', '_gotcha', '_idempotency', '_redirect', '_subject', 'website', 'cf-turnstile-response'),
  fc.oneof(controlValue, idemPool).map(toNode),
);

function toNode(v: unknown): JNode {
  if (Array.isArray(v)) return { arr: v.map(toNode) };
  if (typeof v === 'number') return { num: String(v) };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  return String(v);
}

/** A JSON object root: ordinary odd fields, control fields, sometimes deep or wide or with NUL. */
export const jsonObject: fc.Arbitrary<{ obj: [string, JNode][] }> = fc
  .tuple(
    fc.array(fc.tuple(oddKey, tree.node), { maxLength: 8 }),
    fc.array(controlEntry, { maxLength: 3 }),
    fc.oneof(
      { weight: 12, arbitrary: fc.constant<[string, JNode][]>([]) },
      { weight: 1, arbitrary: deep.map((d): [string, JNode][] => [['deep', d]]) },
      { weight: 1, arbitrary: wide.map((w): [string, JNode][] => [['wide', w]]) },
      { weight: 1, arbitrary: nulString.map((s): [string, JNode][] => [[s, s]]) },
    ),
  )
  .chain(([fields, ctl, extra]) => fc.shuffledSubarray([...fields, ...ctl, ...extra], { minLength: 0 }))
  .map((obj) => ({ obj }));

export const jsonStyle = fc.record({
  indent: fc.constantFrom('', ' ', '\t', '\r\n  '),
  asciiOnly: fc.boolean(),
  bom: fc.boolean(),
});
export type JsonStyle = { indent: string; asciiOnly: boolean; bom: boolean };

const str = (s: string, asciiOnly: boolean) => {
  const j = JSON.stringify(s);
  return asciiOnly ? j.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : j;
};

/** Our own JSON writer: duplicate keys as given, raw number text, the chosen whitespace and escapes. */
export function writeJson(node: JNode, style: JsonStyle): string {
  const ws = style.indent;
  const w = (n: JNode): string => {
    if (n === null || typeof n === 'boolean') return String(n);
    if (typeof n === 'string') return str(n, style.asciiOnly);
    if ('num' in n) return n.num;
    if ('arr' in n) return `[${ws}${n.arr.map(w).join(`,${ws}`)}${ws}]`;
    return `{${ws}${n.obj.map(([k, v]) => `${str(k, style.asciiOnly)}${ws}:${ws}${w(v)}`).join(`,${ws}`)}${ws}}`;
  };
  return (style.bom ? '\ufeff' : '') + w(node);
}

/** Roots that are not objects, and texts that are not JSON at all. */
export const notAnObject = fc.oneof(
  tree.arr.map((a) => writeJson(a, { indent: '', asciiOnly: false, bom: false })),
  leaf.map((l) => writeJson(l, { indent: '', asciiOnly: false, bom: false })),
  fc.constantFrom(
    '',
    ' ',
    '{',
    '{"a":1,}',
    '{"a":1',
    "{'a':1}",
    '{a:1}',
    '{"a":01}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":"\\x41"}',
    '{"a":"\\ud800"}',
    '{"a":1}{"b":2}',
    '{"a":1} x',
    '/* c */{"a":1}',
    '{"a":"\t"}',
    '\u0000{}',
    '[]',
    'null',
    '"str"',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

// ---------------------------------------------------------------- urlencoded

export type PctStyle = 'component' | 'form' | 'raw' | 'lower' | 'all';
const UNRESERVED = /[A-Za-z0-9*\-._]/;

/** Percent-encodes UTF-8 (lone surrogates become U+FFFD, as any encoder would) in one of several styles. */
export function pct(s: string, style: PctStyle): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const ch = String.fromCharCode(byte);
    const hex = byte.toString(16).padStart(2, '0');
    const esc = `%${style === 'lower' ? hex : hex.toUpperCase()}`;
    if (style === 'all') out += esc;
    else if (byte === 0x20) out += style === 'form' || style === 'raw' ? '+' : esc;
    else if (UNRESERVED.test(ch)) out += ch;
    else if (style === 'raw' && !'&=+%#'.includes(ch) && byte !== 0) out += ch;
    else out += esc;
  }
  return out;
}

/** Raw mode keeps non-ASCII as the UTF-8 bytes themselves; the others are ASCII. */
export function urlencodedBytes(pairs: [string, string][], style: PctStyle, sep: string): Uint8Array {
  const text = pairs.map(([k, v]) => `${pct(k, style)}=${pct(v, style)}`).join(sep);
  if (style !== 'raw') return new TextEncoder().encode(text);
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

export const urlPairs = fc.array(
  fc.tuple(
    fc.oneof(oddKey, fc.constantFrom('a', 'a', '_test', '_idempotency', '_gotcha')),
    fc.oneof(oddString, fc.constantFrom('true', 'k1', 'k2')),
  ),
  { maxLength: 10 },
);

/** Texts a hand-written client or a scanner might send as urlencoded. */
export const urlGarbage = fc.string({
  unit: fc.oneof(
    fc.constantFrom('%', '&', '=', '+', ';', '%zz', '%E0%A4%A', '%C3', '%00', '%2', ' ', '#', '?', '\u00e9', '\ud800'),
    fc.string({ maxLength: 3 }),
  ),
  maxLength: 20,
});

// ---------------------------------------------------------------- multipart

export interface Part {
  name: string;
  value: string;
  file?: { filename: string; contentType: string | null; bytes: Uint8Array; star: boolean };
}

/** RFC 2046 boundary characters (a space only inside). */
const BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?";
export const boundary = fc.oneof(
  fc
    .tuple(
      fc.string({ unit: fc.constantFrom(...BCHARS, ' '), minLength: 0, maxLength: 68 }),
      fc.constantFrom(...BCHARS),
    )
    .map(([a, b]) => a + b),
  fc.constantFrom('a', '-', '----WebKitFormBoundary7MA4YWxkTrZu0gW', "'()+_,-./:=?", 'x'.repeat(70)),
);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export const multipartHeader = fc
  .record({ quote: fc.boolean(), upper: fc.boolean(), charset: fc.constantFrom('', 'before', 'after') })
  .map((o) => (b: string) => {
    const value = o.quote || !TOKEN.test(b) ? `"${b}"` : b;
    const type = o.upper ? 'Multipart/Form-Data' : 'multipart/form-data';
    const param = `${o.upper ? 'Boundary' : 'boundary'}=${value}`;
    if (o.charset === 'before') return `${type}; charset=utf-8; ${param}`;
    if (o.charset === 'after') return `${type};${param} ; charset=UTF-8`;
    return `${type}; ${param}`;
  });

const fileName = fc.oneof(
  oddString,
  fc.constantFrom('a.txt', 'résumé.pdf', '../../etc/passwd', 'C:\\fakepath\\x.png', 'a"b.txt', '.', 'x'.repeat(300)),
);

const EMPTY_FILE = { filename: '', contentType: null, bytes: new Uint8Array(), star: false };

export const part: fc.Arbitrary<Part> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ name: oddKey, value: oddString }) },
  {
    weight: 1,
    arbitrary: fc.record({
      name: oddKey,
      value: fc.constant(''),
      file: fc
        .record({
          filename: fileName,
          contentType: fc.constantFrom(null, 'text/plain', 'image/png', 'application/octet-stream', 'x/y; a=b', ''),
          bytes: fc.uint8Array({ maxLength: 200 }),
          // busboy drops a part whose filename* is empty (valid RFC 8187, sent by no browser): not generated.
          star: fc.boolean(),
        })
        .map((f) => (f.filename === '' ? { ...f, star: false, bytes: new Uint8Array() } : f)),
    }),
  },
  // An HTML file input left empty: filename="" and no bytes.
  { weight: 1, arbitrary: fc.record({ name: oddKey, value: fc.constant(''), file: fc.constant(EMPTY_FILE) }) },
);

/**
 * Whether a part is a file to the parser: a non-empty filename (or filename*), or the type
 * application/octet-stream. `filename=""` with another type is a text field (here always empty).
 */
export const isFilePart = (p: Part) =>
  !!p.file && (p.file.filename.toWellFormed() !== '' || p.file.contentType === 'application/octet-stream');

/** RFC 8187 value-chars: attr-char as is, everything else percent-encoded UTF-8. */
const rfc8187 = (s: string) =>
  encodeURIComponent(s.toWellFormed()).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** How a browser writes a name or filename into the header: `"`, CR and LF percent-escaped (HTML spec). */
export const htmlEscape = (s: string) => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/**
 * MIME quoted-string: a backslash is written as a quoted-pair, which is how busboy reads it. (The
 * HTML spec has browsers send it raw; busboy then drops or alters the name: a known divergence.)
 */
const quoted = (s: string) => s.replace(/\\/g, '\\\\');

const enc = (s: string) => new TextEncoder().encode(s);

/** One multipart body; `preamble`/`epilogue` are legal noise around the parts. */
export function multipartBytes(b: string, parts: Part[], preamble: string, epilogue: string): Uint8Array {
  const chunks: Uint8Array[] = [enc(preamble ? `${preamble}\r\n` : '')];
  for (const p of parts) {
    let head = `--${b}\r\nContent-Disposition: form-data; name="${quoted(htmlEscape(p.name))}"`;
    if (p.file) {
      head += p.file.star
        ? `; filename*=UTF-8''${rfc8187(p.file.filename)}`
        : `; filename="${quoted(htmlEscape(p.file.filename))}"`;
      if (p.file.contentType !== null) head += `\r\nContent-Type: ${p.file.contentType}`;
    }
    chunks.push(enc(`${head}\r\n\r\n`), p.file ? p.file.bytes : enc(p.value), enc('\r\n'));
  }
  chunks.push(enc(`--${b}--\r\n${epilogue}`));
  return Buffer.concat(chunks);
}
