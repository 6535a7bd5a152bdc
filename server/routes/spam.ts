import type { OpenAPIHono } from '@hono/zod-openapi';
import { spamOps } from '../../shared/contracts/spam.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { forgetSpamModel, spamFilter } from '../services/spam.js';

export function registerSpam(app: OpenAPIHono<AppEnv>) {
  mount(app, spamOps.get, async (c) => send(c, await spamFilter(c.get('deps'), c.get('actor'))));
  mount(app, spamOps.forget, async (c) => send(c, await forgetSpamModel(c.get('deps'), c.get('actor'))));
}
