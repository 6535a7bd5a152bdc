import type { OpenAPIHono } from '@hono/zod-openapi';
import { destinationOps } from '../../shared/contracts/destinations.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { presentDestination } from '../present/destinations.js';
import { approveDestination, rejectDestination } from '../services/destination-approval.js';
import { testDestination } from '../services/destination-test.js';
import {
  createDestination,
  deleteDestination,
  getDestinationRow,
  listDestinations,
  updateDestination,
} from '../services/destinations.js';
import { mountRemove } from './glue.js';

export function registerDestinations(app: OpenAPIHono<AppEnv>) {
  mount(app, destinationOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listDestinations(c.get('deps'), c.get('actor'), pageOf(q, 'destination'), q));
  });
  mount(app, destinationOps.create, async (c) =>
    send(c, await createDestination(c.get('deps'), c.get('actor'), c.req.valid('json')), 201),
  );
  mount(app, destinationOps.get, async (c) =>
    send(
      c,
      presentDestination(
        await getDestinationRow(c.get('deps').database.db, c.get('actor').orgId, c.req.valid('param').id),
      ),
    ),
  );
  mount(app, destinationOps.update, async (c) =>
    send(c, await updateDestination(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, destinationOps.delete, deleteDestination);
  mount(app, destinationOps.approve, async (c) =>
    send(c, presentDestination(await approveDestination(c.get('deps'), c.get('actor'), c.req.valid('param').id))),
  );
  mountRemove(app, destinationOps.reject, rejectDestination);
  mount(app, destinationOps.test, async (c) =>
    send(c, await testDestination(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
}
