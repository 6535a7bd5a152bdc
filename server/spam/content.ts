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

/** The content signals of a submission's texts (its string values). */
export function contentSignals(texts: readonly string[]): Signal[] {
  const signals: Signal[] = [];
  let links = 0;
  let words = 0;
  let shortener: string | null = null;
  let markup = false;
  let repeated = false;
  let symbols = false;
  let caps = false;
  const seenLong = new Map<string, number>();
  for (const text of texts) {
    const hosts = linkHosts(text);
    links += hosts.length;
    shortener ??= hosts.find((h) => SHORTENERS.has(h.replace(/^www\./, ''))) ?? null;
    const ws = wordsOf(text);
    words += ws.length;
    if (!markup && text.length > 3 && MARKUP_RE.test(text)) markup = true;
    if (!repeated && ws.length >= 10) {
      const freq = new Map<string, number>();
      let top = 0;
      for (const w of ws) {
        if (w.length < 3) continue;
        const n = (freq.get(w) ?? 0) + 1;
        freq.set(w, n);
        if (n > top) top = n;
      }
      if (top * 10 >= ws.length * 4) repeated = true;
    }
    if (text.length >= 40) {
      const key = text.trim().toLowerCase();
      const n = (seenLong.get(key) ?? 0) + 1;
      seenLong.set(key, n);
      if (n >= 3) repeated = true;
    }
    const compact = text.replace(/\s+/g, '');
    if (!symbols && compact.length >= 20 && !/^https?:\/\//i.test(compact) && !compact.includes('@')) {
      if (count(compact, LETTER_RE) * 10 < compact.length * 4) symbols = true;
    }
    if (!caps) {
      const letters = count(text, LETTER_RE);
      if (letters >= 20 && count(text, UPPER_RE) * 10 >= letters * 9) caps = true;
    }
  }
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
