import type { OpenAPIHono } from '@hono/zod-openapi';
import { eventOps } from '../../shared/contracts/events.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { listEvents } from '../services/events.js';

export function registerEvents(app: OpenAPIHono<AppEnv>) {
  mount(app, eventOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listEvents(c.get('deps'), c.get('actor'), pageOf(q, 'event'), q));
  });
}
