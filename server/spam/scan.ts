/**
 * One pass over a text's characters for every spam signal that reads them all: the letters,
 * capitals and other non-space characters (`mostly_symbols`, `all_caps`), a bound on its most
 * frequent word (`repeated_text`) and the velocity hash of the text as the velocity keys see it
 * (lowercased, each run of white space one space, trimmed). Three passes became one: on a request
 * these loops were most of the spam step's time (docs/spam.md, "Measured again").
 *
 * ASCII only, nearly every text: for any other the scan stops and says so (`ascii` false), and
 * each reader reads the text its own way (the Unicode classes, a normalized copy).
 */
export interface TextScan {
  ascii: boolean;
  letters: number;
  upper: number;
  nonSpace: number;
  /** words as wordsOf finds them (runs of letters and digits joined by `'`, `_` or `-`) */
  words: number;
  /** the count in the fullest of BUCKETS buckets of the words of 3 characters or more, by a hash: the most frequent word occurs at most this often */
  fullest: number;
  /** the velocity hash of the normalized text (two 32-bit halves, see textHash) and its normalized length */
  h1: number;
  h2: number;
  n: number;
  /** an @ and no inner white space: it could be a whole address */
  address: boolean;
  /** how many @ it holds, and the index of the first (-1: none) */
  ats: number;
  atIndex: number;
  /** the text without its leading and trailing white space: text.slice(start, end) */
  start: number;
  end: number;
  /** every character class met (CLASS bits): MARKUP (a < or a [) and COLON (a :) let a check skip its search */
  classes: number;
}

/** A text shorter than this gives no signal that reads its characters (and no velocity key). */
export const MIN_SCANNED_CHARS = 20;

const BUCKETS = 64;
/**
 * The scan's tables in one array, so one page holds them all (on a request that finds them out of
 * cache, each page touched costs): the class of each ASCII character, the buckets' counts, and which
 * scan each bucket's count belongs to (a bucket of an earlier scan counts as empty: no clearing per text).
 */
const table = new Int32Array(128 + 2 * BUCKETS);
const COUNTS = 128;
const STAMPS = 128 + BUCKETS;
let scanNo = 0;

const NOT_ASCII: TextScan = Object.freeze({
  ascii: false,
  letters: 0,
  upper: 0,
  nonSpace: 0,
  words: 0,
  fullest: 0,
  h1: 0,
  h2: 0,
  n: -1,
  address: false,
  ats: 0,
  atIndex: -1,
  start: 0,
  end: 0,
  classes: 0,
}) as TextScan;

/** The hashes' last mix (murmur3's): every input bit moves every output bit. */
export function fmix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const H1 = 0x811c9dc5 | 0;
const H2 = 0x9747b28c | 0;

/** Results of textHash (two halves and the length): no object per call. */
export const hashed = { h1: 0, h2: 0, n: 0 };

/**
 * The velocity hash of a text as it is (no normalizing): FNV-1a and a multiply-xorshift over its
 * UTF-16 code units, each finished by fmix. scanText gives the same hash of an ASCII text as this
 * gives of its normalized copy, so a text that is not ASCII, normalized first, meets the same key.
 */
export function textHash(text: string): void {
  let h1 = H1;
  let h2 = H2;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  hashed.h1 = fmix(h1);
  hashed.h2 = fmix(h2);
  hashed.n = text.length;
}

/** Character classes of ASCII, one bit each: a table read instead of a chain of comparisons per character. */
const SPACE = 1;
const UPPER = 2;
const LOWER = 4;
const DIGIT = 8;
const JOINER = 16;
const AT = 32;
/** `<` or `[`: markup (HTML or BBCode) needs one */
export const MARKUP = 64;
/** `:`: a link (http://) needs one */
export const COLON = 128;
for (let c = 0; c < 128; c += 1) {
  if (c === 32 || (c >= 9 && c <= 13)) table[c] = SPACE;
  else if (c >= 65 && c <= 90) table[c] = UPPER;
  else if (c >= 97 && c <= 122) table[c] = LOWER;
  else if (c >= 48 && c <= 57) table[c] = DIGIT;
  // `'`, `_` and `-` join a word's parts (wordsOf's joiners, less the typographic apostrophe)
  else if (c === 39 || c === 95 || c === 45) table[c] = JOINER;
  else if (c === 64) table[c] = AT;
  else if (c === 60 || c === 91) table[c] = MARKUP;
  else if (c === 58) table[c] = COLON;
}
const WORD = UPPER | LOWER | DIGIT;

/** Counts a word of 3 characters or more in its bucket; answers the fullest bucket's count so far. */
function bucket(hash: number, stamp: number, fullest: number): number {
  const b = hash & (BUCKETS - 1);
  const count = table[STAMPS + b] === stamp ? table[COUNTS + b] + 1 : 1;
  table[STAMPS + b] = stamp;
  table[COUNTS + b] = count;
  return count > fullest ? count : fullest;
}

/** The scan of one text (see TextScan); the shared NOT_ASCII answer for a text that is not ASCII. */
export function scanText(text: string): TextScan {
  scanNo = (scanNo + 1) | 0;
  const stamp = scanNo;
  let letters = 0;
  let upper = 0;
  let nonSpace = 0;
  let words = 0;
  let fullest = 0;
  // the word being read: its start, its hash up to its last letter or digit, and where that was
  let inWord = false;
  let wordStart = 0;
  let wordEnd = 0;
  let wh = 0;
  let whEnd = 0;
  // the velocity hash: a space is hashed only when something follows it (runs of white space are one, and trimmed)
  let h1 = H1;
  let h2 = H2;
  let n = 0;
  let space = false;
  let inner = false;
  let classes = 0;
  let ats = 0;
  let atIndex = -1;
  let start = -1;
  let end = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c > 127) return NOT_ASCII;
    const f = table[c];
    if (f & WORD) {
      if (!inWord) {
        inWord = true;
        wordStart = i;
        wh = 0x811c9dc5;
      }
      wh = Math.imul(wh ^ (c | 32), 0x01000193);
      whEnd = wh;
      wordEnd = i + 1;
    } else if (inWord) {
      // a joiner inside a word is part of it; trailing ones are not (whEnd and wordEnd stay)
      if (f & JOINER) wh = Math.imul(wh ^ (c | 32), 0x01000193);
      else {
        inWord = false;
        words += 1;
        if (wordEnd - wordStart >= 3) fullest = bucket(whEnd, stamp, fullest);
      }
    }
    if (f & SPACE) {
      space = n > 0;
      continue;
    }
    nonSpace += 1;
    letters += ((f >> 1) | (f >> 2)) & 1;
    upper += (f >> 1) & 1;
    classes |= f;
    if (start < 0) start = i;
    end = i + 1;
    if (f & AT) {
      if (ats === 0) atIndex = i;
      ats += 1;
    }
    if (space) {
      h1 = Math.imul(h1 ^ 32, 0x01000193);
      h2 = Math.imul(h2 ^ 32, 0x5bd1e995);
      h2 ^= h2 >>> 15;
      n += 1;
      space = false;
      inner = true;
    }
    const lc = c | ((f & UPPER) << 4); // a capital's lowercase is 32 above it
    h1 = Math.imul(h1 ^ lc, 0x01000193);
    h2 = Math.imul(h2 ^ lc, 0x5bd1e995);
    h2 ^= h2 >>> 15;
    n += 1;
  }
  if (inWord) {
    words += 1;
    if (wordEnd - wordStart >= 3) fullest = bucket(whEnd, stamp, fullest);
  }
  return {
    ascii: true,
    letters,
    upper,
    nonSpace,
    words,
    fullest,
    h1: fmix(h1),
    h2: fmix(h2),
    n,
    address: ats > 0 && !inner,
    ats,
    atIndex,
    start: start < 0 ? 0 : start,
    end,
    classes,
  };
}
