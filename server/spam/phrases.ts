import { wordsOf } from './tokens.js';

/**
 * A set of words and phrases matched on word boundaries, case-insensitively, in linear time: the
 * phrases are kept as a trie of words, and a text's words are walked once from each position for at
 * most the longest phrase's length (no regular expression built from owner input, so no backtracking).
 */
export interface PhraseSet {
  /** The first phrase found in the words, as the owner wrote it; null when none is there. */
  find(words: readonly string[]): string | null;
  readonly size: number;
}

interface Node {
  next: Map<string, Node>;
  phrase?: string;
}

/** At most this many words in one phrase; longer ones are cut (the match then needs only these). */
export const MAX_PHRASE_WORDS = 8;

export function phraseSet(phrases: readonly string[]): PhraseSet {
  const root: Node = { next: new Map() };
  let depth = 0;
  let size = 0;
  for (const phrase of phrases) {
    const words = wordsOf(phrase).slice(0, MAX_PHRASE_WORDS);
    if (words.length === 0) continue;
    let node = root;
    for (const w of words) {
      let child = node.next.get(w);
      if (!child) {
        child = { next: new Map() };
        node.next.set(w, child);
      }
      node = child;
    }
    node.phrase ??= phrase;
    depth = Math.max(depth, words.length);
    size += 1;
  }
  return {
    size,
    find(words) {
      if (size === 0) return null;
      for (let i = 0; i < words.length; i += 1) {
        let node: Node | undefined = root;
        for (let j = i; j < words.length && j < i + depth; j += 1) {
          node = node.next.get(words[j]);
          if (!node) break;
          if (node.phrase !== undefined) return node.phrase;
        }
      }
      return null;
    },
  };
}
