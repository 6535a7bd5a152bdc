/**
 * Words and tokens of a submission, for the content signals, the owner's keyword lists and the
 * learning filter. Bounded: a submission yields at most MAX_TOKENS tokens and its text is read once.
 */

const MAX_TOKENS = 2000;
const MAX_TEXT = 20_000;
/** Letters and digits of any script; everything else separates words. */
const WORD_RE = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu;
const LINK_RE = /\bhttps?:\/\/([^\s/?#"'<>]+)/gi;

/** The string values of a submission's data, nested ones included, in order; at most MAX_TEXT characters. */
export function textsOf(data: unknown): string[] {
  const out: string[] = [];
  let left = MAX_TEXT;
  const walk = (v: unknown, depth: number) => {
    if (left <= 0 || depth > 8) return;
    if (typeof v === 'string') {
      const s = v.length > left ? v.slice(0, left) : v;
      left -= s.length;
      if (s) out.push(s);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
    } else if (v && typeof v === 'object') {
      for (const x of Object.values(v)) walk(x, depth + 1);
    }
  };
  walk(data, 0);
  return out;
}

/** The words of a text, lowercased. */
export function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(WORD_RE) ?? []).map((w) => w.replace(/['’_-]+$/, ''));
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

/**
 * The distinct tokens the learning filter counts: words of 2 to 30 characters (numbers only when
 * short), and `host:<name>` for each linked host, so a domain that spam links to weighs by itself.
 */
export function tokensOf(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const text of texts) {
    for (const w of wordsOf(text)) {
      if (w.length < 2 || w.length > 30) continue;
      if (/^\d+$/.test(w) && w.length > 4) continue;
      seen.add(w);
      if (seen.size >= MAX_TOKENS) return [...seen];
    }
    for (const h of linkHosts(text)) {
      seen.add(`host:${h}`);
      if (seen.size >= MAX_TOKENS) return [...seen];
    }
  }
  return [...seen];
}
