import { json, op, z } from './common.js';

export const systemOps = {
  health: op('public', {
    method: 'get',
    path: '/healthz',
    operationId: 'system_health',
    tags: ['discovery'],
    summary: 'Liveness: 200 once the database is migrated and the worker runs',
    responses: { 200: json(z.object({ ok: z.literal(true) })), 503: json(z.object({ ok: z.literal(false) })) },
  }),
  llms: op('public', {
    method: 'get',
    path: '/llms.txt',
    operationId: 'system_llms',
    tags: ['discovery'],
    summary: 'Markdown onboarding for agents: from nothing to a key and a routed form',
    responses: { 200: { description: 'Markdown', content: { 'text/markdown': { schema: z.string() } } } },
  }),
  errorsDoc: op('public', {
    method: 'get',
    path: '/docs/errors',
    operationId: 'system_errors_doc',
    tags: ['discovery'],
    summary: 'Every error code with its meaning and its fix (HTML)',
    responses: { 200: { description: 'HTML', content: { 'text/html': { schema: z.string() } } } },
  }),
};
