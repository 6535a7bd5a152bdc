import type { OpenAPIHono } from '@hono/zod-openapi';
import { projectOps } from '../../shared/contracts/projects.js';
import { pageOf } from '../core/pagination.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { presentProject } from '../present/projects.js';
import { createProject, deleteProject, getProjectRow, listProjects, updateProject } from '../services/projects.js';
import { mountRemove } from './glue.js';

export function registerProjects(app: OpenAPIHono<AppEnv>) {
  mount(app, projectOps.list, async (c) =>
    send(c, await listProjects(c.get('deps'), c.get('actor'), pageOf(c.req.valid('query'), 'project'))),
  );
  mount(app, projectOps.create, async (c) => {
    const r = await createProject(c.get('deps'), c.get('actor'), c.req.valid('json'));
    return send(c, r.project, r.created ? 201 : 200);
  });
  mount(app, projectOps.get, async (c) =>
    send(
      c,
      presentProject(await getProjectRow(c.get('deps').database.db, c.get('actor').orgId, c.req.valid('param').id)),
    ),
  );
  mount(app, projectOps.update, async (c) =>
    send(c, await updateProject(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, projectOps.delete, deleteProject);
}
