import type { Operation, z } from '../../shared/contracts/common.js';
import { operations } from '../../shared/contracts/index.js';

/** One registry path template as a matcher: `{id}` takes one path segment. */
interface Route {
  op: Operation;
  pattern: RegExp;
  params: number;
}

const routes: Route[] = operations.map((op) => ({
  op,
  pattern: new RegExp(`^${op.path.replaceAll(/\{[^}]+\}/g, '[^/]+').replaceAll('.', '\\.')}$`),
  params: (op.path.match(/\{/g) ?? []).length,
}));

/**
 * The registry operation a test request reaches: method and path (without the query) matched against
 * every operation's template; a literal segment wins over a parameter (`/v1/forms/{id}` vs a fixed
 * path), as the router does. Undefined for paths outside the registry (the dashboard, HTML pages).
 */
export function operationFor(method: string, path: string): Operation | undefined {
  const pathname = new URL(path, 'http://test.invalid').pathname;
  const m = method.toLowerCase();
  const found = routes.filter((r) => r.op.method === m && r.pattern.test(pathname));
  found.sort((a, b) => a.params - b.params);
  return found[0]?.op;
}

/** The JSON schema the contract declares for one status of an operation, if any. */
function jsonSchema(op: Operation, status: number): z.ZodType | undefined {
  const response = (op.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>)[String(status)];
  const schema = response?.content?.['application/json']?.schema;
  return schema && typeof (schema as z.ZodType).safeParse === 'function' ? (schema as z.ZodType) : undefined;
}

/**
 * Checks a 2xx JSON answer against the contract's response schema for its operation and status: a
 * field the server forgets, or one of the wrong type, throws here with the operation and the issues.
 * A 2xx status the contract does not declare for the operation throws as well.
 */
export function checkResponse(method: string, path: string, status: number, contentType: string | null, json: unknown) {
  if (status < 200 || status >= 300 || json === undefined) return;
  if (!contentType?.includes('application/json')) return;
  const op = operationFor(method, path);
  if (!op) return;
  if (!(String(status) in op.responses)) {
    throw new Error(`${op.operationId} answered ${status}, which its contract does not declare`);
  }
  const schema = jsonSchema(op, status);
  if (!schema) return;
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n');
    throw new Error(`${op.operationId} ${status}: the answer does not match its contract\n${issues}`);
  }
}
