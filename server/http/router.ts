import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/** Paths whose answer is kept, and the longest path kept (longer ones are matched every time). */
const KEPT = 512;
const KEPT_PATH_CHARS = 200;

/**
 * Hono's own router (RegExpRouter where it can, else TrieRouter) that keeps its answer for the
 * paths asked most recently. The contract has both `POST /v1/deliveries/retry` and
 * `POST /v1/deliveries/{id}/retry`, which Hono's RegExpRouter cannot hold, so the whole app falls
 * back to TrieRouter, which walks its tree for every request (about 3 µs of an intake request's
 * 110). Routes are all added at start, so a path's answer never changes: intake's few
 * `/s/{formId}` paths are matched once. The table holds at most 512 paths of at most 200
 * characters and starts over when full, so random paths cost only a miss each.
 */
export class KeptRouter<T> implements Router<T> {
  name = 'KeptRouter';
  readonly #inner: Router<T> = new SmartRouter<T>({ routers: [new RegExpRouter<T>(), new TrieRouter<T>()] });
  readonly #kept = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T) {
    this.#kept.clear();
    this.#inner.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > KEPT_PATH_CHARS) return this.#inner.match(method, path);
    const key = `${method} ${path}`;
    let result = this.#kept.get(key);
    if (result === undefined) {
      result = this.#inner.match(method, path);
      if (this.#kept.size >= KEPT) this.#kept.clear();
      this.#kept.set(key, result);
    }
    return result;
  }
}
