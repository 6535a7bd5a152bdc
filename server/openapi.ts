import type { OpenAPIHono } from '@hono/zod-openapi';
import { IDEMPOTENCY_KEY_PARAMETER } from '../shared/contracts/common.js';
import { SECURITY_SCHEMES } from '../shared/contracts/security.js';
import { TAGS } from '../shared/contracts/tags.js';
import type { AppEnv } from './http/context.js';

/**
 * The contract served at /openapi.json: generated from the operations mounted on `app`, plus what
 * the operations share (security schemes, the Idempotency-Key header, the tags and what they mean).
 * `npm run openapi:snapshot` writes it for the committed snapshot; `npm run lint:openapi` lints it.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, baseUrl: string) {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'formsvc',
      version: '0.1.0',
      description:
        'Form intake and routing service. Every error answers {error: {code, message, hint, docs, details}}; ' +
        '/docs/errors lists the codes. Start with /llms.txt.',
      // OpenAPI 3.1 names a license by its SPDX identifier; the generator's types know only 3.0's url.
      license: { name: 'MIT', identifier: 'MIT' } as { name: string },
    },
    servers: [{ url: baseUrl, description: 'this server' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
  });
  doc.components = {
    ...doc.components,
    securitySchemes: { ...SECURITY_SCHEMES },
    parameters: { ...doc.components?.parameters, IdempotencyKey: { ...IDEMPOTENCY_KEY_PARAMETER } },
  };
  return doc;
}
