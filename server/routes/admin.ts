import type { OpenAPIHono } from '@hono/zod-openapi';
import { adminOps } from '../../shared/contracts/admin.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { growthMetrics } from '../services/growth.js';
import { createGrant, listGrants, revokeGrant } from '../services/plan-grants.js';

export function registerAdmin(app: OpenAPIHono<AppEnv>) {
  mount(app, adminOps.createGrant, async (c) =>
    send(c, await createGrant(c.get('deps'), c.get('actor'), c.req.valid('json')), 201),
  );
  mount(app, adminOps.listGrants, async (c) =>
    send(c, await listGrants(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'planGrant'))),
  );
  mount(app, adminOps.revokeGrant, async (c) =>
    send(c, await revokeGrant(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, adminOps.growth, async (c) => send(c, await growthMetrics(c.get('deps'), c.get('actor'))));
}
