import { COLON, MARKUP, MIN_SCANNED_CHARS, scanText, type TextScan } from './scan.js';
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

/** Letters, capitals and non-space characters of a text that is not ASCII, by the Unicode classes. */
function unicodeCounts(text: string): { letters: number; upper: number; nonSpace: number } {
  const compact = text.replace(/\s+/g, '');
  return { letters: count(compact, LETTER_RE), upper: count(compact, UPPER_RE), nonSpace: compact.length };
}

/** Whether one word makes up 40 % or more of a long text's words (of 3 letters or more). */
export function repeatsAWord(text: string, scan: TextScan = scanText(text)): boolean {
  // The scan's bound settles an ASCII text (nearly every one) without making a word.
  if (scan.ascii && (scan.words < 10 || scan.fullest * 10 < scan.words * 4)) return false;
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

/**
 * The content signals of a submission's texts (its string values). Each check first looks for the
 * one character its pattern needs (`http`, `<` or `[`, a long value), so an ordinary message costs
 * a pass over its characters and little more.
 */
export function contentSignals(texts: readonly string[], scans?: readonly TextScan[]): Signal[] {
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
  for (let i = 0; i < texts.length; i += 1) {
    const text = texts[i];
    // the characters' counts, the words' bound and the classes met, read in the pass the velocity keys share (scan.ts)
    const scan = scans?.[i] ?? scanText(text);
    // an ASCII text without a colon has no link, and without < or [ no markup: no search made
    const ascii = scan.ascii;
    if (text.length > 6 && (!ascii || scan.classes & COLON) && text.includes('http')) {
      const hosts = linkHosts(text);
      links += hosts.length;
      shortener ??= hosts.find((h) => SHORTENERS.has(h.replace(/^www\./, ''))) ?? null;
    }
    if (
      !markup &&
      text.length > 3 &&
      (ascii ? scan.classes & MARKUP : text.includes('<') || text.includes('[')) &&
      MARKUP_RE.test(text)
    ) {
      markup = true;
    }
    if (text.length >= 40) {
      if (!repeated && repeatsAWord(text, scan)) repeated = true;
      if (seenLong) {
        const key = text.trim().toLowerCase();
        const n = (seenLong.get(key) ?? 0) + 1;
        seenLong.set(key, n);
        if (n >= 3) repeated = true;
      }
    }
    if (text.length < MIN_SCANNED_CHARS || (symbols && caps)) continue;
    const { letters, upper, nonSpace } = ascii ? scan : unicodeCounts(text);
    // a link or an address alone is no symbol soup (tested last: most texts are mostly letters)
    if (!symbols && nonSpace >= 20 && letters * 10 < nonSpace * 4) {
      if (!/^\s*https?:\/\//i.test(text) && !text.includes('@')) symbols = true;
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
