/**
 * Routes that follow the answers: a route's `match`, a JSON condition over what a submission
 * carries, checked once when the route is written and compiled once into a closure that intake's
 * planning calls per submission (plan.ts keeps one per route row, and the rows live in intake's
 * cache). No regular expressions and bounded size: evaluation is linear in the condition.
 *
 * A condition is an object. `$and` / `$or` take a list of conditions, `$not` one condition; every
 * other key is a dotted path rooted at `data`, `meta` or `submission` (`submission.test`,
 * `submission.status`) whose value is either a bare value (meaning `$eq`) or an object of
 * operators: `$eq $ne $in $nin $gt $gte $lt $lte $exists $contains $not`. Several keys in one
 * object must all hold.
 */

export interface MatchContext {
  data: Record<string, unknown>;
  meta: Record<string, unknown>;
  submission: { test: boolean; status: string };
}

export type Matcher = (ctx: MatchContext) => boolean;

export interface MatchIssue {
  path: string;
  message: string;
}

/** Limits that keep a condition small enough to read and cheap to evaluate. */
export const MATCH_LIMITS = { depth: 8, nodes: 100, string: 1000, path: 200 } as const;

const ROOTS = new Set(['data', 'meta', 'submission']);
const SUBMISSION_FIELDS = new Set(['test', 'status']);
const FIELD_OPS = new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists', '$contains', '$not']);

export class MatchError extends Error {
  constructor(readonly issue: MatchIssue) {
    super(`${issue.path}: ${issue.message}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The compiler's running state: the node budget is shared by the whole condition. */
interface State {
  nodes: number;
}

function fail(path: string, message: string): never {
  throw new MatchError({ path, message });
}

function count(state: State, path: string) {
  state.nodes += 1;
  if (state.nodes > MATCH_LIMITS.nodes) fail(path, `the condition has more than ${MATCH_LIMITS.nodes} parts`);
}

// ---------------------------------------------------------------- values

/** A literal: JSON without operator keys, strings bounded; counted against the node budget. */
function literal(v: unknown, path: string, state: State, depth: number): unknown {
  count(state, path);
  if (depth > MATCH_LIMITS.depth) fail(path, `nested deeper than ${MATCH_LIMITS.depth} levels`);
  if (typeof v === 'string') {
    if (v.length > MATCH_LIMITS.string) fail(path, `a string longer than ${MATCH_LIMITS.string} characters`);
    return v;
  }
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) fail(path, 'not a finite number');
    return v;
  }
  if (Array.isArray(v)) return v.map((x, i) => literal(x, `${path}.${i}`, state, depth + 1));
  if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (k.startsWith('$')) fail(`${path}.${k}`, 'an operator inside a value; write {"$eq": …} around objects');
      literal(x, `${path}.${k}`, state, depth + 1);
    }
    return v;
  }
  return fail(path, 'not a JSON value');
}

/** A number, or a string that is one ("25" from a form post): compared as numbers. */
function numeric(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/**
 * Equality as a form owner means it: a number equals its numeric string ("25" from a form post), a
 * boolean its "true"/"false"; arrays and objects compare deeply, keys in any order.
 */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof b === 'number' && typeof a === 'string') return numeric(a) === b;
  if (typeof a === 'number' && typeof b === 'string') return numeric(b) === a;
  if (typeof b === 'boolean' && typeof a === 'string') return a === String(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(b);
    return Object.keys(a).length === keys.length && keys.every((k) => k in a && same(a[k], b[k]));
  }
  return false;
}

type Order = '$gt' | '$gte' | '$lt' | '$lte';

/** Numbers (or numeric strings) compare as numbers, two strings as text (ISO dates sort right); else no match. */
function ordered(op: Order, value: unknown, bound: number | string): boolean {
  let c: number;
  if (typeof bound === 'number') {
    const n = numeric(value);
    if (n === null) return false;
    c = n - bound;
  } else {
    if (typeof value !== 'string') return false;
    c = value < bound ? -1 : value > bound ? 1 : 0;
  }
  if (op === '$gt') return c > 0;
  if (op === '$gte') return c >= 0;
  if (op === '$lt') return c < 0;
  return c <= 0;
}

function contains(value: unknown, needle: unknown): boolean {
  if (Array.isArray(value)) return value.some((x) => same(x, needle));
  return typeof value === 'string' && typeof needle === 'string' && value.includes(needle);
}

// ---------------------------------------------------------------- paths

type Getter = (ctx: MatchContext) => unknown;

/** A dotted path rooted at data, meta or submission, as a getter (numeric segments index lists). */
function getter(key: string, path: string): Getter {
  if (key.length > MATCH_LIMITS.path) fail(path, `a path longer than ${MATCH_LIMITS.path} characters`);
  const parts = key.split('.');
  const [root, ...rest] = parts;
  if (!ROOTS.has(root) || parts.some((p) => p === '')) {
    fail(path, 'a field path starts with data., meta. or submission. (e.g. "data.email"), or use $and, $or, $not');
  }
  if (root === 'submission' && (rest.length !== 1 || !SUBMISSION_FIELDS.has(rest[0]))) {
    fail(path, 'of the submission, a condition reads submission.test and submission.status');
  }
  if (!rest.length) fail(path, `name a field under ${root}, e.g. "${root}.${root === 'data' ? 'email' : 'origin'}"`);
  return (ctx) => {
    let v: unknown = ctx[root as keyof MatchContext];
    for (const p of rest) {
      if (Array.isArray(v)) v = /^\d+$/.test(p) ? v[Number(p)] : undefined;
      else if (isObject(v)) v = Object.hasOwn(v, p) ? v[p] : undefined;
      else return undefined;
    }
    return v;
  };
}

// ---------------------------------------------------------------- operators on one field

type Test = (value: unknown) => boolean;

function listOperand(v: unknown, path: string, state: State, depth: number): unknown[] {
  if (!Array.isArray(v)) fail(path, 'expects a list of values');
  return literal(v, path, state, depth) as unknown[];
}

function fieldOp(op: string, arg: unknown, path: string, state: State, depth: number): Test {
  switch (op) {
    case '$eq':
    case '$ne': {
      const want = literal(arg, path, state, depth);
      return op === '$eq' ? (v) => same(v, want) : (v) => !same(v, want);
    }
    case '$in':
    case '$nin': {
      const list = listOperand(arg, path, state, depth);
      const hit = (v: unknown) =>
        Array.isArray(v) ? v.some((x) => list.some((w) => same(x, w))) : list.some((w) => same(v, w));
      return op === '$in' ? hit : (v) => !hit(v);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      count(state, path);
      if (typeof arg !== 'string' && (typeof arg !== 'number' || !Number.isFinite(arg))) {
        fail(path, 'compares with a number or a string');
      }
      if (typeof arg === 'string' && arg.length > MATCH_LIMITS.string) fail(path, 'a string too long');
      return (v) => ordered(op, v, arg);
    }
    case '$exists': {
      count(state, path);
      if (typeof arg !== 'boolean') fail(path, 'expects true or false');
      return arg ? (v) => v !== undefined && v !== null : (v) => v === undefined || v === null;
    }
    case '$contains': {
      const needle = literal(arg, path, state, depth);
      return (v) => contains(v, needle);
    }
    case '$not': {
      const inner = fieldTest(arg, path, state, depth + 1);
      return (v) => !inner(v);
    }
    default:
      return fail(path, `unknown operator; use one of ${[...FIELD_OPS].join(' ')}`);
  }
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));

/** A field's test: a bare value means $eq; an object of operators must all hold. */
function fieldTest(v: unknown, path: string, state: State, depth: number): Test {
  if (depth > MATCH_LIMITS.depth) fail(path, `nested deeper than ${MATCH_LIMITS.depth} levels`);
  if (!isOperatorObject(v)) {
    if (isObject(v) && Object.keys(v).some((k) => k.startsWith('$'))) {
      fail(path, 'mixes operators and plain keys; write {"$eq": {…}} to compare with an object');
    }
    const want = literal(v, path, state, depth);
    return (x) => same(x, want);
  }
  const tests = Object.entries(v).map(([op, arg]) => fieldOp(op, arg, `${path}.${op}`, state, depth + 1));
  return tests.length === 1 ? tests[0] : (x) => tests.every((t) => t(x));
}

// ---------------------------------------------------------------- conditions

function conditionList(v: unknown, path: string, state: State, depth: number): Matcher[] {
  if (!Array.isArray(v) || v.length === 0) fail(path, 'expects a non-empty list of conditions');
  return v.map((c, i) => condition(c, `${path}.${i}`, state, depth + 1));
}

function condition(v: unknown, path: string, state: State, depth: number): Matcher {
  if (depth > MATCH_LIMITS.depth) fail(path, `nested deeper than ${MATCH_LIMITS.depth} levels`);
  if (!isObject(v)) fail(path, 'a condition is an object, e.g. {"data.topic": "sales"}');
  count(state, path);
  const parts: Matcher[] = [];
  for (const [key, arg] of Object.entries(v)) {
    const at = `${path}.${key}`;
    if (key === '$and' || key === '$or') {
      const list = conditionList(arg, at, state, depth);
      parts.push(key === '$and' ? (c) => list.every((m) => m(c)) : (c) => list.some((m) => m(c)));
    } else if (key === '$not') {
      const inner = condition(arg, at, state, depth + 1);
      parts.push((c) => !inner(c));
    } else if (key.startsWith('$')) {
      fail(at, 'unknown combinator; use $and, $or or $not (field operators go under a field path)');
    } else {
      const get = getter(key, at);
      const test = fieldTest(arg, at, state, depth + 1);
      parts.push((c) => test(get(c)));
    }
  }
  if (parts.length === 1) return parts[0];
  return (c) => parts.every((m) => m(c));
}

/** Compiles a condition (`match` on the wire); throws MatchError naming the bad part (`match.$and.1.data.age.$gtx`). */
export function compileMatch(condition_: unknown, root = 'match'): Matcher {
  return condition(condition_, root, { nodes: 0 }, 0);
}

/** The issue of an invalid condition, or null when it compiles. */
export function matchIssue(condition_: unknown, root = 'match'): MatchIssue | null {
  try {
    compileMatch(condition_, root);
    return null;
  } catch (err) {
    if (err instanceof MatchError) return err.issue;
    throw err;
  }
}
