import type { OpenAPIHono } from '@hono/zod-openapi';
import { deliveryOps } from '../../shared/contracts/deliveries.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { presentDelivery } from '../present/deliveries.js';
import { getDeliveryRow, listDeliveries, retryDelivery } from '../services/deliveries.js';
import { retryDeliveries } from '../services/replay.js';

export function registerDeliveries(app: OpenAPIHono<AppEnv>) {
  mount(app, deliveryOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listDeliveries(c.get('deps'), c.get('actor'), pageOf(q, 'delivery'), q));
  });
  mount(app, deliveryOps.get, async (c) =>
    send(
      c,
      presentDelivery(await getDeliveryRow(c.get('deps').database.db, c.get('actor').orgId, c.req.valid('param').id)),
    ),
  );
  mount(app, deliveryOps.retryAll, async (c) =>
    send(c, await retryDeliveries(c.get('deps'), c.get('actor'), c.req.valid('json'))),
  );
  mount(app, deliveryOps.retry, async (c) =>
    send(c, await retryDelivery(c.get('deps'), c.get('actor'), c.req.valid('param').id), 202),
  );
}
