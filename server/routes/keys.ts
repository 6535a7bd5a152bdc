import type { OpenAPIHono } from '@hono/zod-openapi';
import { keyOps } from '../../shared/contracts/keys.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { createKey, getKey, listKeys, revokeKey } from '../services/keys.js';
import { mountRemove } from './glue.js';

export function registerKeys(app: OpenAPIHono<AppEnv>) {
  mount(app, keyOps.create, async (c) =>
    send(c, await createKey(c.get('deps'), c.get('actor'), c.req.valid('json')), 201),
  );
  mount(app, keyOps.list, async (c) =>
    send(c, await listKeys(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'apiKey'))),
  );
  mount(app, keyOps.get, async (c) => send(c, await getKey(c.get('deps'), c.get('actor'), c.req.valid('param').id)));
  mountRemove(app, keyOps.revoke, revokeKey);
}
