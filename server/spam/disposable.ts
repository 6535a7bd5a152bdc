import { createRequire } from 'node:module';

/**
 * Disposable (throwaway) mail domains, from the `disposable-email-domains` package (about 120,000
 * domains, kept current by updating the package). Loaded on first use (or by `warmDisposable` after
 * start-up) and kept as one sorted array searched by halves: less than half the memory of a Set.
 */
let domains: string[] | null = null;

function load(): string[] {
  if (!domains) {
    const require = createRequire(import.meta.url);
    const list = (require('disposable-email-domains') as string[]).map((d) => d.toLowerCase());
    list.sort();
    domains = list;
  }
  return domains;
}

/** Loads the list off the request path (start-up calls it once the server listens). */
export function warmDisposable(): void {
  setImmediate(load).unref?.();
}

function listed(list: string[], domain: string): boolean {
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

/** The listed domain an address's domain falls under (itself or a parent), or null. */
export function disposableDomain(domain: string): string | null {
  const list = load();
  let d = domain.toLowerCase();
  for (;;) {
    if (listed(list, d)) return d;
    const dot = d.indexOf('.');
    if (dot < 0) return null;
    d = d.slice(dot + 1);
  }
}
