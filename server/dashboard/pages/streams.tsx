import type { Hono } from 'hono';
import { streamOps } from '../../../shared/contracts/streams.js';
import { pageOf } from '../../core/pagination.js';
import { getStream, listStreams, previewStream } from '../../services/streams.js';
import type { DashEnv } from '../env.js';
import { allow, queryFor } from '../input.js';
import { page } from '../render.js';
import { StreamDetail } from './streams/detail.js';
import { StreamList } from './streams/list.js';

export function registerStreamPages(dash: Hono<DashEnv>): void {
  dash.get('/streams', async (c) => {
    allow(c, streamOps.list);
    const q = queryFor(streamOps.list, c.req.query());
    const list = await listStreams(c.var.deps, c.var.actor, pageOf(q, 'stream'));
    return page(c, { title: 'Streams', section: 'streams' }, <StreamList list={list} />);
  });

  dash.get('/streams/:id', async (c) => {
    allow(c, streamOps.get);
    const id = c.req.param('id');
    const s = await getStream(c.var.deps, c.var.actor, id);
    allow(c, streamOps.preview);
    const preview = await previewStream(c.var.deps, c.var.actor, id, { limit: 10 });
    return page(c, { title: `Stream ${s.name}`, section: 'streams' }, <StreamDetail s={s} preview={preview} />);
  });
}
