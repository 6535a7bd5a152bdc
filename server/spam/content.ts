import { linkHosts, wordsOf } from './tokens.js';

/** One reason a submission looks like spam, with the weight it adds (combined as independent odds). */
export interface Signal {
  code: string;
  text: string;
  weight: number;
}

const SHORTENERS = new Set([
  'bit.ly',
  'bitly.com',
  'tinyurl.com',
  't.co',
  'goo.gl',
  'ow.ly',
  'is.gd',
  'buff.ly',
  'cutt.ly',
  'rebrand.ly',
  'shorturl.at',
  'rb.gy',
  't.ly',
  'tiny.cc',
  'bit.do',
  's.id',
  'v.gd',
  'shorte.st',
  'adf.ly',
  'clck.ru',
  'qrco.de',
  'tiny.one',
  'lnkd.in',
  'surl.li',
  'u.to',
  'x.gd',
]);
const MARKUP_RE =
  /<\s*\/?\s*(a|script|iframe|img|div|span|p|b|i|u|strong|em|br|html|body|style|font|center|h[1-6])\b[^>]*>|\[\/?(url|link|img|b|i|u|color|size)(=[^\]]*)?\]/i;
const LETTER_RE = /\p{L}/gu;
const UPPER_RE = /\p{Lu}/gu;

const count = (s: string, re: RegExp) => s.match(re)?.length ?? 0;
/** Words counted cheaply (runs of letters or digits): the link-density and repetition checks need no more. */
const WORDISH_RE = /[\p{L}\p{N}]+/gu;

/**
 * Letters and capitals of a text in one pass over its characters; ASCII needs no regular
 * expression (the common case), anything else is counted with the Unicode classes.
 */
function letterCounts(text: string): { letters: number; upper: number; nonSpace: number } {
  let letters = 0;
  let upper = 0;
  let nonSpace = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c > 127) {
      const compact = text.replace(/\s+/g, '');
      return { letters: count(compact, LETTER_RE), upper: count(compact, UPPER_RE), nonSpace: compact.length };
    }
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    nonSpace += 1;
    if (c >= 65 && c <= 90) {
      letters += 1;
      upper += 1;
    } else if (c >= 97 && c <= 122) letters += 1;
  }
  return { letters, upper, nonSpace };
}

/** Whether one word makes up 40 % or more of a long text's words (of 3 letters or more). */
export function repeatsAWord(text: string): boolean {
  if (settledByBuckets(text)) return false;
  const ws = wordsOf(text);
  if (ws.length < 10) return false;
  const freq = new Map<string, number>();
  let top = 0;
  for (const w of ws) {
    if (w.length < 3) continue;
    const n = (freq.get(w) ?? 0) + 1;
    freq.set(w, n);
    if (n > top) top = n;
  }
  return top * 10 >= ws.length * 4;
}

/** ASCII letters and digits: a word starts with one. */
const alnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** `'`, `_` and `-` join a word's parts (wordsOf's joiners, less the typographic apostrophe). */
const joiner = (c: number) => c === 39 || c === 95 || c === 45;

const BUCKETS = 64;
const buckets = new Int32Array(BUCKETS);

/**
 * Whether an ASCII text (the common case) surely repeats no word enough, decided without the
 * Unicode regular expression and without making a string: its words (as wordsOf finds them) are
 * counted into a few buckets by a hash, and the fullest bucket bounds the most frequent word. False
 * when the text is not ASCII or the bound could reach 40 %: then wordsOf counts exactly.
 */
function settledByBuckets(text: string): boolean {
  buckets.fill(0);
  let words = 0;
  let fullest = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c > 127) return false;
    if (!alnum(c)) {
      i += 1;
      continue;
    }
    const start = i;
    let end = i + 1; // after the last letter or digit: trailing joiners are not part of the word
    for (i += 1; i < text.length; i += 1) {
      const d = text.charCodeAt(i);
      if (d > 127) return false;
      if (alnum(d)) end = i + 1;
      else if (!joiner(d)) break;
    }
    words += 1;
    if (end - start < 3) continue;
    let h = 0x811c9dc5;
    for (let k = start; k < end; k += 1) h = Math.imul(h ^ (text.charCodeAt(k) | 32), 0x01000193);
    const b = (h >>> 0) % BUCKETS;
    buckets[b] += 1;
    if (buckets[b] > fullest) fullest = buckets[b];
  }
  return words < 10 || fullest * 10 < words * 4;
}

/**
 * The content signals of a submission's texts (its string values). Each check first looks for the
 * one character its pattern needs (`http`, `<` or `[`, a long value), so an ordinary message costs
 * a pass over its characters and little more.
 */
export function contentSignals(texts: readonly string[]): Signal[] {
  const signals: Signal[] = [];
  let links = 0;
  let words = 0;
  let shortener: string | null = null;
  let markup = false;
  let repeated = false;
  let symbols = false;
  let caps = false;
  // The same long text three times needs three long texts: the usual message has one, and is not copied.
  let longTexts = 0;
  for (const text of texts) if (text.length >= 40) longTexts += 1;
  const seenLong = longTexts >= 3 ? new Map<string, number>() : null;
  for (const text of texts) {
    if (text.length > 6 && text.includes('http')) {
      const hosts = linkHosts(text);
      links += hosts.length;
      shortener ??= hosts.find((h) => SHORTENERS.has(h.replace(/^www\./, ''))) ?? null;
    }
    if (!markup && text.length > 3 && (text.includes('<') || text.includes('[')) && MARKUP_RE.test(text)) {
      markup = true;
    }
    if (text.length >= 40) {
      if (!repeated && repeatsAWord(text)) repeated = true;
      if (seenLong) {
        const key = text.trim().toLowerCase();
        const n = (seenLong.get(key) ?? 0) + 1;
        seenLong.set(key, n);
        if (n >= 3) repeated = true;
      }
    }
    if (text.length < 20 || (symbols && caps)) continue;
    const { letters, upper, nonSpace } = letterCounts(text);
    if (!symbols && nonSpace >= 20 && !/^\s*https?:\/\//i.test(text) && !text.includes('@')) {
      if (letters * 10 < nonSpace * 4) symbols = true;
    }
    if (!caps && letters >= 20 && upper * 10 >= letters * 9) caps = true;
  }
  if (links > 0) for (const text of texts) words += count(text, WORDISH_RE);
  if (links >= 3) signals.push({ code: 'many_links', text: `${links} links`, weight: 0.5 });
  else if (links >= 1 && links * 8 > words) {
    signals.push({ code: 'link_density', text: `${links} link(s) in ${words} words`, weight: 0.3 });
  }
  if (shortener) signals.push({ code: 'url_shortener', text: `a link through ${shortener}`, weight: 0.45 });
  if (markup) signals.push({ code: 'markup', text: 'HTML or BBCode in a plain field', weight: 0.45 });
  if (repeated) signals.push({ code: 'repeated_text', text: 'the same words or text repeated', weight: 0.35 });
  if (symbols) signals.push({ code: 'mostly_symbols', text: 'a value that is mostly not letters', weight: 0.3 });
  if (caps) signals.push({ code: 'all_caps', text: 'a value written in capitals', weight: 0.2 });
  return signals;
}
