import type { OpenAPIHono } from '@hono/zod-openapi';
import { routeOps } from '../../shared/contracts/routes.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from '../services/routes.js';
import { registerDestinations } from './destinations.js';
import { mountRemove } from './glue.js';

/** Routing configuration: destinations and the routes that connect forms to them. */
export function registerRouting(app: OpenAPIHono<AppEnv>) {
  registerDestinations(app);
  mount(app, routeOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listRoutes(c.get('deps'), c.get('actor'), pageOf(q, 'route'), q));
  });
  mount(app, routeOps.create, async (c) =>
    send(c, await createRoute(c.get('deps'), c.get('actor'), c.req.valid('json')), 201),
  );
  mount(app, routeOps.get, async (c) =>
    send(c, await getRoute(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, routeOps.update, async (c) =>
    send(c, await updateRoute(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, routeOps.delete, deleteRoute);
}
