import type { OpenAPIHono } from '@hono/zod-openapi';
import { meOps } from '../../shared/contracts/me.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { me } from '../services/me.js';

export function registerMe(app: OpenAPIHono<AppEnv>) {
  mount(app, meOps.get, async (c) => send(c, await me(c.get('deps'), c.get('actor'))));
}
