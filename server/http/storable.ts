import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../core/errors.js';
import type { AppEnv } from './context.js';

/**
 * PostgreSQL stores no NUL character (text or jsonb), and jsonb refuses an unpaired UTF-16
 * surrogate escape such as "\ud800". A JSON body holding either is answered 422 with the field's
 * path, before a service writes it and the database fails the request with a 500.
 */
export const storableJson: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!/json/i.test(c.req.header('content-type') ?? '')) return next();
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text()); // cached: the validator parses the same text again
  } catch {
    return next(); // malformed JSON is the validator's answer
  }
  const path = unstorable(body, []);
  if (path) {
    throw new ApiError('validation_failed', 'The body has a string that cannot be stored.', {
      hint: 'Remove NUL characters (\\u0000) and unpaired surrogate escapes (\\ud800-\\udfff) from the strings sent.',
      details: {
        issues: [
          { path: path.join('.') || '(body)', message: 'holds a NUL character or an unpaired UTF-16 surrogate' },
        ],
      },
    });
  }
  return next();
};

const bad = (s: string) => s.includes('\u0000') || !s.isWellFormed();

/**
 * The same rule for path parameters and, where the operation reads a query, query parameters
 * (`/v1/forms/%00`, `?form_id=%00`): a value the database cannot hold would fail the lookup with a
 * 500. No row can have such an id, so a path answers 404; a query names the field in a 422.
 */
export function storableParams(readsQuery: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    for (const [name, value] of Object.entries(c.req.param() as Record<string, string>)) {
      if (bad(value)) {
        throw new ApiError('not_found', `Not found: the ${name} in the path holds a NUL or an unpaired surrogate.`, {
          hint: `Check the ${name} in the path: copy it from the answer that created or listed it.`,
        });
      }
    }
    if (!readsQuery) return next();
    const issues = Object.entries(c.req.queries())
      .filter(([key, values]) => bad(key) || values.some(bad))
      .map(([key]) => ({ path: key, message: 'holds a NUL character or an unpaired UTF-16 surrogate' }));
    if (issues.length) {
      throw new ApiError('validation_failed', 'The query has a value that cannot be stored.', {
        hint: 'Remove NUL characters (%00) and unpaired surrogates from the query parameters.',
        details: { issues },
      });
    }
    return next();
  };
}

/**
 * The path of the first string or key that cannot be stored, or null. Iterative, and each node
 * keeps only its parent and key (the path is spelled out once, on a find): bodies nest far deeper
 * than the call stack allows, and copying the path at every level would be quadratic.
 */
function unstorable(root: unknown, rootPath: string[]): string[] | null {
  interface Node {
    value: unknown;
    parent: Node | null;
    key: string;
  }
  const pathOf = (node: Node | null, last?: string) => {
    const keys: string[] = last === undefined ? [] : [last];
    for (let n = node; n?.parent; n = n.parent) keys.push(n.key);
    return [...rootPath, ...keys.reverse()];
  };
  const stack: Node[] = [{ value: root, parent: null, key: '' }];
  while (stack.length) {
    const node = stack.pop() as Node;
    const v = node.value;
    if (typeof v === 'string') {
      if (bad(v)) return pathOf(node);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i -= 1) stack.push({ value: v[i], parent: node, key: String(i) });
    } else if (v && typeof v === 'object') {
      const entries = Object.entries(v);
      for (const [k] of entries) if (bad(k)) return pathOf(node, k);
      for (let i = entries.length - 1; i >= 0; i -= 1)
        stack.push({ value: entries[i][1], parent: node, key: entries[i][0] });
    }
  }
  return null;
}
