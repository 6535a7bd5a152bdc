import type { RouteRow } from '../db/rows.js';
import { compileMatch, type MatchContext, type Matcher } from '../domain/match.js';

/**
 * A route's `match`, compiled once per route row: the rows live in intake's cached entry
 * (cache.ts), so a condition is compiled when its form's entry is read, not per submission. A row
 * read again (the entry moved on) is a new object and compiles again; the old one goes with it.
 */
const compiled = new WeakMap<RouteRow, Matcher | null>();

function matcherOf(route: RouteRow): Matcher | null {
  let m = compiled.get(route);
  if (m === undefined) {
    // Written through the API, so valid; one that no longer compiles (limits changed) matches
    // everything: a delivery sent too many is better than one never planned.
    try {
      m = route.match === null || route.match === undefined ? null : compileMatch(route.match);
    } catch {
      m = null;
    }
    compiled.set(route, m);
  }
  return m;
}

/** Whether the route's condition rejects this submission (a route without one takes all). */
export function failsMatch(route: RouteRow, ctx: () => MatchContext): boolean {
  const m = matcherOf(route);
  return m !== null && !m(ctx());
}
