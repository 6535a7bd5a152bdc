import type { OpenAPIHono } from '@hono/zod-openapi';
import { streamOps } from '../../shared/contracts/streams.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, noContent, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import {
  attachSources,
  createStream,
  deleteStream,
  detachSource,
  getStream,
  getStreamSchema,
  listSources,
  listStreams,
  previewStream,
  publishStreamSchema,
  updateStream,
} from '../services/streams.js';
import { mountRemove } from './glue.js';

export function registerStreams(app: OpenAPIHono<AppEnv>) {
  mount(app, streamOps.list, async (c) =>
    send(c, await listStreams(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'stream'))),
  );
  mount(app, streamOps.create, async (c) => {
    const r = await createStream(c.get('deps'), c.get('actor'), c.req.valid('json'));
    return send(c, r.stream, r.created ? 201 : 200);
  });
  mount(app, streamOps.get, async (c) =>
    send(c, await getStream(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, streamOps.update, async (c) =>
    send(c, await updateStream(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, streamOps.delete, deleteStream);
  mount(app, streamOps.getSchema, async (c) =>
    send(c, await getStreamSchema(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, streamOps.publishSchema, async (c) =>
    send(
      c,
      await publishStreamSchema(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json')),
      201,
    ),
  );
  mount(app, streamOps.listSources, async (c) =>
    send(c, await listSources(c.get('deps'), c.get('actor'), c.req.valid('param').id)),
  );
  mount(app, streamOps.attachSources, async (c) => {
    const b = c.req.valid('json');
    const inputs =
      'sources' in b && Array.isArray(b.sources) ? b.sources : [b as Exclude<typeof b, { sources: unknown }>];
    return send(c, await attachSources(c.get('deps'), c.get('actor'), c.req.valid('param').id, inputs), 201);
  });
  mount(app, streamOps.detachSource, async (c) => {
    const p = c.req.valid('param');
    await detachSource(c.get('deps'), c.get('actor'), p.id, p.sourceId);
    return noContent(c);
  });
  mount(app, streamOps.preview, async (c) =>
    send(c, await previewStream(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('query'))),
  );
}
