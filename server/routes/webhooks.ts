import type { OpenAPIHono } from '@hono/zod-openapi';
import { webhookOps } from '../../shared/contracts/webhooks.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { presentWebhook } from '../present/webhooks.js';
import { retryWebhookDeliveries } from '../services/replay.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhookRow,
  listWebhookDeliveries,
  listWebhooks,
  updateWebhook,
} from '../services/webhooks.js';
import { mountRemove } from './glue.js';

export function registerWebhooks(app: OpenAPIHono<AppEnv>) {
  mount(app, webhookOps.list, async (c) =>
    send(c, await listWebhooks(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'webhook'))),
  );
  mount(app, webhookOps.create, async (c) =>
    send(c, await createWebhook(c.get('deps'), c.get('actor'), c.req.valid('json')), 201),
  );
  mount(app, webhookOps.get, async (c) =>
    send(
      c,
      presentWebhook(await getWebhookRow(c.get('deps').database.db, c.get('actor').orgId, c.req.valid('param').id)),
    ),
  );
  mount(app, webhookOps.update, async (c) =>
    send(c, await updateWebhook(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, webhookOps.delete, deleteWebhook);
  mount(app, webhookOps.retryDeliveries, async (c) =>
    send(c, await retryWebhookDeliveries(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mount(app, webhookOps.deliveries, async (c) => {
    const q = c.req.valid('query');
    const id = c.req.valid('param').id;
    return send(c, await listWebhookDeliveries(c.get('deps'), c.get('actor'), id, pageOf(q, 'webhookDelivery'), q));
  });
}
