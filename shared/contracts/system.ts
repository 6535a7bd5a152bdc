import { json, op, z } from './common.js';

const OpenApiDocument = z
  .looseObject({
    openapi: z.string(),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'OpenApiDocument', description: 'an OpenAPI 3.1 document' });

export const systemOps = {
  health: op('public', {
    method: 'get',
    path: '/healthz',
    operationId: 'system_health',
    tags: ['discovery'],
    summary: 'Liveness: 200 while the process runs (it listens only once the database is migrated)',
    description:
      'Asks nothing of the database: a load balancer or orchestrator restarts a process that stops answering ' +
      'here. Whether the process should get traffic is /readyz.',
    responses: { 200: json(z.object({ ok: z.literal(true) })) },
  }),
  ready: op('public', {
    method: 'get',
    path: '/readyz',
    operationId: 'system_ready',
    tags: ['discovery'],
    summary: 'Readiness: 200 when the database answers and is migrated; 503 with a reason otherwise',
    description:
      'Also 503 from the moment a shutdown starts (SIGTERM or SIGINT), so a load balancer stops sending ' +
      'requests while the process finishes those in flight.',
    responses: {
      200: json(z.object({ ok: z.literal(true) })),
      503: json(z.object({ ok: z.literal(false), reason: z.string() })),
    },
  }),
  llms: op('public', {
    method: 'get',
    path: '/llms.txt',
    operationId: 'system_llms',
    tags: ['discovery'],
    summary: 'Markdown onboarding for agents: from nothing to a key and a routed form',
    description:
      'The steps from no account to a key, a form and a verified delivery, with this server’s base URL in every ' +
      'example; /openapi.json holds the whole contract.',
    responses: { 200: { description: 'Markdown', content: { 'text/markdown': { schema: z.string() } } } },
  }),
  openapi: op('public', {
    method: 'get',
    path: '/openapi.json',
    operationId: 'system_openapi',
    tags: ['discovery'],
    summary: 'This contract: OpenAPI 3.1, generated from the operations the server mounts',
    description:
      'Every operation with its x-scope, the credentials it accepts (security), its parameters, bodies, ' +
      'answers and error codes. Generate a typed client from it (e.g. openapi-typescript).',
    responses: { 200: json(OpenApiDocument, 'OpenAPI 3.1 document') },
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
