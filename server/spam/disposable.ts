import { createRequire } from 'node:module';

/**
 * Disposable (throwaway) mail domains, from the `disposable-email-domains` package (about 120,000
 * domains, kept current by updating the package). Loaded on first use (or by `warmDisposable` after
 * start-up) and kept as one sorted array (less than half the memory of a Set), with a table of
 * 32-bit hashes beside it (1 MB): a domain that is not listed, nearly every one, is answered by one
 * or two reads of that table, with no string made or compared; a hash that matches is confirmed in
 * the array, searched by halves. (Searching the array alone compared some 17 strings spread over
 * the heap per domain and suffix: cheap in a loop, slow on a request that finds them out of cache.)
 */
interface Index {
  sorted: string[];
  /** open addressing, linear probing; 0 is an empty slot (hashes are stored with their low bit set) */
  slots: Int32Array;
}

let index: Index | null = null;
const SLOTS = 1 << 18;

/** FNV-1a of text[start..], low bit set (never 0). */
function hashFrom(text: string, start: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = start; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h | 1;
}

function load(): Index {
  if (!index) {
    const require = createRequire(import.meta.url);
    const sorted = (require('disposable-email-domains') as string[]).map((d) => d.toLowerCase());
    sorted.sort();
    const slots = new Int32Array(SLOTS);
    for (const d of sorted) {
      const h = hashFrom(d, 0);
      let slot = h & (SLOTS - 1);
      while (slots[slot] !== 0 && slots[slot] !== h) slot = (slot + 1) & (SLOTS - 1);
      slots[slot] = h;
    }
    index = { sorted, slots };
  }
  return index;
}

/** Loads the list off the request path (start-up calls it once the server listens). */
export function warmDisposable(): void {
  setImmediate(load).unref?.();
}

function inSorted(list: string[], domain: string): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = list[mid];
    if (v === domain) return true;
    if (v < domain) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Whether domain[start..] is listed: its hash in the table first, then the array for a match. */
function listedFrom({ sorted, slots }: Index, domain: string, start: number): boolean {
  const h = hashFrom(domain, start);
  for (let slot = h & (SLOTS - 1); slots[slot] !== 0; slot = (slot + 1) & (SLOTS - 1)) {
    if (slots[slot] === h) return inSorted(sorted, start ? domain.slice(start) : domain);
  }
  return false;
}

/** The listed domain an address's domain falls under (itself or a parent), or null. */
export function disposableDomain(domain: string): string | null {
  const list = load();
  const d = domain.toLowerCase();
  let start = 0;
  for (;;) {
    if (listedFrom(list, d, start)) return start ? d.slice(start) : d;
    const dot = d.indexOf('.', start);
    if (dot < 0) return null;
    start = dot + 1;
  }
}
