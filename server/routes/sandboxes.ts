import type { OpenAPIHono } from '@hono/zod-openapi';
import { sandboxOps } from '../../shared/contracts/sandboxes.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { claimPage, claimSandbox, createSandbox, readSandbox } from '../services/sandboxes.js';

export function registerSandboxes(app: OpenAPIHono<AppEnv>) {
  mount(app, sandboxOps.create, async (c) =>
    send(
      c,
      await createSandbox(c.get('deps'), {
        idempotencyKey: c.req.header('idempotency-key'),
        ip: c.get('clientIp'),
        body: c.req.valid('json'),
      }),
      201,
    ),
  );
  mount(app, sandboxOps.read, async (c) =>
    send(c, await readSandbox(c.get('deps'), c.req.valid('param').id, c.req.header('authorization'))),
  );
  mount(app, sandboxOps.claim, async (c) =>
    send(
      c,
      await claimSandbox(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.header('service-sandbox-token')),
    ),
  );
  mount(app, sandboxOps.claimPage, async (c) => {
    c.header('Cache-Control', 'no-store');
    return c.html(await claimPage(c.get('deps'), c.req.valid('param').id), 200) as never;
  });
}
