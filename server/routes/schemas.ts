import type { OpenAPIHono } from '@hono/zod-openapi';
import { schemaOps } from '../../shared/contracts/schemas.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import {
  getCurrentSchema,
  inferFormSchema,
  listSchemaVersions,
  publicSchema,
  publishSchema,
} from '../services/schemas.js';

export function registerSchemas(app: OpenAPIHono<AppEnv>) {
  mount(app, schemaOps.get, async (c) =>
    send(c, await getCurrentSchema(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, schemaOps.publish, async (c) =>
    send(c, await publishSchema(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json')), 201),
  );
  mount(app, schemaOps.infer, async (c) =>
    // The body is optional: without one the validator hands over nothing, which means all defaults.
    send(c, await inferFormSchema(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json') ?? {})),
  );
  mount(app, schemaOps.versions, async (c) =>
    send(c, await listSchemaVersions(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('query'))),
  );
  mount(app, schemaOps.public, async (c) => {
    // Always CORS-open, errors included, so a page on any origin can read the answer.
    c.header('Access-Control-Allow-Origin', '*');
    const out = await publicSchema(c.get('deps'), c.req.valid('param').formId);
    c.header('Cache-Control', 'public, max-age=60');
    return send(c, out);
  });
  mount(app, schemaOps.publicPreflight, async (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Access-Control-Allow-Methods', 'GET, OPTIONS');
    c.header('Access-Control-Allow-Headers', 'Content-Type, Accept');
    c.header('Access-Control-Max-Age', '86400');
    return c.body(null, 204) as never;
  });
}
