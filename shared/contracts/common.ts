import { createRoute, type RouteConfig, z } from '@hono/zod-openapi';
import { ERROR_CODES, type ErrorCode } from '../errors.js';

export { z };

/** Who may call an operation. `session` = dashboard session cookie with owner or admin role. */
export type Scope = 'public' | 'submit' | 'read' | 'manage' | 'session';

export const Timestamp = z
  .string()
  .meta({ description: 'ISO 8601 UTC timestamp', example: '2026-01-01T00:00:00.000Z' });

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      hint: z.string().optional(),
      docs: z.string().optional(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: 'Error' });

/** Error responses for a route: the codes it can return, grouped by status. */
export function errors(...codes: ErrorCode[]) {
  const out: Record<
    number,
    { description: string; content: { 'application/json': { schema: typeof ErrorEnvelope } } }
  > = {};
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    const prev = out[status]?.description;
    out[status] = {
      description: prev ? `${prev}, ${code}` : code,
      content: { 'application/json': { schema: ErrorEnvelope } },
    };
  }
  return out;
}

export const json = <T extends z.ZodType>(schema: T, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});

export const body = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

export const ListQuery = z.object({
  cursor: z.string().optional().meta({ description: 'next_cursor of the previous page' }),
  limit: z.coerce.number().int().min(1).max(200).optional().meta({ description: 'page size, default 50, at most 200' }),
});

export const listOf = <T extends z.ZodType>(item: T, id: string) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() }).meta({ id });

export const IdParam = z.object({ id: z.string().meta({ param: { name: 'id', in: 'path' } }) });

export const NextStep = z.object({
  why: z.string(),
  method: z.string(),
  path: z.string(),
  body: z.record(z.string(), z.unknown()).optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

export const IfExists = z.enum(['return', 'error']).optional().meta({
  description: '"return" answers the existing resource instead of 409 conflict',
});

/** One entry of the operation registry: a createRoute config plus who may call it. */
export type Operation = RouteConfig & { operationId: string; scope: Scope; getRoutingPath(): string };

/** Defines one operation. operationId is `<resource>_<verb>`. */
export function op<P extends string, R extends Omit<RouteConfig, 'path'> & { path: P; operationId: string }>(
  scope: Scope,
  route: R,
) {
  const base = createRoute(route);
  return Object.assign(base, { scope });
}

export const STD_ERRORS = ['unauthorized', 'forbidden', 'internal_error'] as const;
