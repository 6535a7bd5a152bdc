import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import type { IdParam, Operation } from '../../shared/contracts/common.js';
import type { Actor, Deps } from '../core/deps.js';
import { type AppEnv, noContent } from '../http/context.js';
import { mount } from '../http/mount.js';

/** An operation on the resource the path's {id} names, whose contract answers 204. */
type RemoveOp = Operation & RouteConfig & { request: { params: typeof IdParam }; responses: { 204: unknown } };

/**
 * Mounts a delete (or revoke, or remove) by id: the service verb runs on the path's id for the
 * caller, and the answer is 204 with no body.
 */
export function mountRemove(
  app: OpenAPIHono<AppEnv>,
  op: RemoveOp,
  remove: (deps: Deps, actor: Actor, id: string) => Promise<unknown>,
): void {
  mount(app, op, async (c) => {
    await remove(c.get('deps'), c.get('actor'), c.req.valid('param').id);
    return noContent(c);
  });
}
