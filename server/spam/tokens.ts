/**
 * Words and tokens of a submission, for the content signals, the owner's keyword lists and the
 * learning filter. Bounded: a submission yields at most MAX_TOKENS tokens and its text is read once.
 */

const MAX_TOKENS = 2000;
const MAX_TEXT = 20_000;
/** Letters and digits of any script; everything else separates words. */
const WORD_RE = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
const TRAILING = "'’_-";
const LINK_RE = /\bhttps?:\/\/([^\s/?#"'<>]+)/gi;

/** The string values of a submission's data, nested ones included, in order; at most MAX_TEXT characters. */
export function textsOf(data: unknown): string[] {
  const out: string[] = [];
  walkTexts(data, 0, out, MAX_TEXT);
  return out;
}

/** textsOf's walk (a function, not a closure made per call); answers the characters still allowed. */
function walkTexts(v: unknown, depth: number, out: string[], left: number): number {
  if (left <= 0 || depth > 8) return left;
  if (typeof v === 'string') {
    const s = v.length > left ? v.slice(0, left) : v;
    if (s) out.push(s);
    return left - s.length;
  }
  if (Array.isArray(v)) {
    for (const x of v) left = walkTexts(x, depth + 1, out, left);
  } else if (v && typeof v === 'object') {
    for (const x of Object.values(v)) left = walkTexts(x, depth + 1, out, left);
  }
  return left;
}

/** The words of a text, lowercased. */
export function wordsOf(text: string): string[] {
  const words = text.toLowerCase().match(WORD_RE) ?? [];
  // Trailing joiners are rare: the regular expression runs only on the words that end with one.
  for (let i = 0; i < words.length; i += 1) {
    if (TRAILING.includes(words[i].charAt(words[i].length - 1))) words[i] = words[i].replace(/['’_-]+$/, '');
  }
  return words;
}

/** Hosts of the http(s) links in a text, lowercased, without a port or credentials. */
export function linkHosts(text: string): string[] {
  const hosts: string[] = [];
  for (const m of text.matchAll(LINK_RE)) {
    const host = m[1].toLowerCase().replace(/^.*@/, '').replace(/:\d+$/, '');
    if (host) hosts.push(host);
  }
  return hosts;
}

const WHOLE_EMAIL_RE = /^[^\s@]{1,64}@([^\s@]{1,255})$/;
/** An amount of money: a currency sign before digits, or a currency code after them. */
const MONEY_RE = /[$€£¥₽]\s?(\d[\d,.]*)|(\d[\d,.]*)\s?(?:usd|eur|gbp|dollars|euros?)\b/i;
const CJK_RE = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;
const CYRILLIC_RE = /[\u0400-\u04ff]/;

/** A bounded set of tokens: add() answers false once it is full. */
class TokenSet {
  readonly seen = new Set<string>();
  add(token: string): boolean {
    this.seen.add(token);
    return this.seen.size < MAX_TOKENS;
  }
}

/** A whole-value address gives its domain (`email:<domain>`), and whether its local part holds digits. */
function addressTokens(out: TokenSet, text: string): boolean {
  const m = WHOLE_EMAIL_RE.exec(text.trim().toLowerCase());
  if (!m) return false;
  out.add(`email:${m[1]}`);
  if (/\d/.test(text.slice(0, text.indexOf('@')))) out.add('email:digits');
  return true;
}

/**
 * Tokens of a run of CJK characters (no spaces between words): its characters in pairs, the usual
 * way to index such text, at most 200 of them.
 */
function cjkTokens(out: TokenSet, word: string): boolean {
  const chars = [...word];
  for (let i = 0; i + 1 < chars.length && i < 200; i += 1) if (!out.add(chars[i] + chars[i + 1])) return false;
  return true;
}

/** Tokens of one text's words: each word and each pair of neighbours (phrases weigh more than their words). */
function wordTokens(out: TokenSet, text: string): boolean {
  let prev: string | null = null;
  for (const w of wordsOf(text)) {
    if (w.length > 30 || (w.length > 2 && CJK_RE.test(w))) {
      prev = null;
      if (CJK_RE.test(w) && !cjkTokens(out, w)) return false;
      continue;
    }
    if (/^\d+$/.test(w)) {
      // Numbers say little by themselves, and never twice the same: kept only when short.
      prev = null;
      if (w.length <= 4 && !out.add(w)) return false;
      continue;
    }
    if (w.length >= 2 && !out.add(w)) return false;
    if (prev && !out.add(`${prev} ${w}`)) return false;
    prev = w;
  }
  return true;
}

/** The link tokens: `host:<name>` and `tld:<last label>` per linked host. */
function linkTokens(out: TokenSet, text: string): number {
  const hosts = linkHosts(text);
  for (const h of hosts) {
    const host = h.replace(/^www\./, '');
    out.add(`host:${host}`);
    out.add(`tld:${host.slice(host.lastIndexOf('.') + 1)}`);
  }
  return hosts.length;
}

/**
 * The distinct tokens the learning filter counts: words of 2 to 30 characters (numbers only when
 * short) and pairs of neighbouring words; characters in pairs for CJK text; `host:<name>` and
 * `tld:<tld>` for each linked host, so a domain that spam links to weighs by itself; and a few
 * features of the whole submission: how many links (`links:0`..`links:3+`), an amount of money
 * (`money`, `money:big` from 1,000), the script (`script:cyrillic`, `script:cjk`) and the domain of
 * an address given as a whole value (`email:<domain>`, `email:digits`).
 */
export function tokensOf(texts: readonly string[]): string[] {
  const out = new TokenSet();
  let links = 0;
  for (const text of texts) {
    if (text.length <= 320 && text.includes('@') && addressTokens(out, text)) continue;
    if (!wordTokens(out, text)) return [...out.seen];
    if (text.length > 6 && text.includes('http')) links += linkTokens(out, text);
    const money = MONEY_RE.exec(text);
    if (money) {
      out.add('money');
      if (Number((money[1] ?? money[2]).replace(/[,.]\d{2}$/, '').replace(/[,.]/g, '')) >= 1000) out.add('money:big');
    }
    if (CYRILLIC_RE.test(text)) out.add('script:cyrillic');
    if (CJK_RE.test(text)) out.add('script:cjk');
  }
  out.add(`links:${links >= 3 ? '3+' : links}`);
  return [...out.seen];
}
