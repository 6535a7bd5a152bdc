import type { OpenAPIHono } from '@hono/zod-openapi';
import { driftOps } from '../../shared/contracts/drift.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { dismissDrift, listDrift } from '../services/drift.js';

export function registerDrift(app: OpenAPIHono<AppEnv>) {
  mount(app, driftOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listDrift(c.get('deps'), c.get('actor'), c.req.valid('param').id, pageOf(q, 'drift'), q));
  });
  mount(app, driftOps.dismiss, async (c) => {
    const p = c.req.valid('param');
    return send(c, await dismissDrift(c.get('deps'), c.get('actor'), p.id, p.driftId));
  });
}
