import type { OpenAPIHono } from '@hono/zod-openapi';
import { quickstartOps } from '../../shared/contracts/quickstart.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { quickstart } from '../services/quickstart.js';

export function registerQuickstart(app: OpenAPIHono<AppEnv>) {
  mount(app, quickstartOps.run, async (c) => {
    const { created, result } = await quickstart(c.get('deps'), c.get('actor'), c.req.valid('json'));
    return send(c, result, created ? 201 : 200);
  });
}
