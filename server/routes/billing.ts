import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { billingOps } from '../../shared/contracts/billing.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { applyWebhook, verifyWebhook } from '../services/billing.js';
import { redeemGrant } from '../services/plan-grants.js';

/**
 * Runs before the contract's header and body validators: the signature covers the raw body text
 * (read once; Hono caches it, so the JSON validator parses these same bytes afterwards).
 */
const signed: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { config, now } = c.get('deps');
  verifyWebhook(
    config,
    now(),
    {
      id: c.req.header('webhook-id'),
      timestamp: c.req.header('webhook-timestamp'),
      signature: c.req.header('webhook-signature'),
    },
    await c.req.text(),
  );
  return next();
};

export function registerBilling(app: OpenAPIHono<AppEnv>) {
  mount(app, billingOps.redeem, async (c) =>
    send(c, await redeemGrant(c.get('deps'), c.get('actor'), c.req.valid('json').code)),
  );
  mount(
    app,
    billingOps.webhook,
    async (c) =>
      send(c, await applyWebhook(c.get('deps'), c.req.valid('header')['webhook-id'], c.req.valid('json')), 202),
    [signed],
  );
}
