import type { OpenAPIHono } from '@hono/zod-openapi';
import { formOps } from '../../shared/contracts/forms.js';
import { pageOf } from '../core/pagination.js';
import { getFormRow } from '../domain/form-rows.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { createForm, deleteForm, formEmbed, formWithCounts, listForms, updateForm } from '../services/forms.js';
import { mountRemove } from './glue.js';

export function registerForms(app: OpenAPIHono<AppEnv>) {
  mount(app, formOps.list, async (c) => {
    const q = c.req.valid('query');
    return send(c, await listForms(c.get('deps'), c.get('actor'), pageOf(q, 'form'), q));
  });
  mount(app, formOps.create, async (c) => {
    const r = await createForm(c.get('deps'), c.get('actor'), c.req.valid('json'));
    return send(c, r.form, r.created ? 201 : 200);
  });
  mount(app, formOps.get, async (c) => {
    const deps = c.get('deps');
    return send(
      c,
      await formWithCounts(deps, await getFormRow(deps.database.db, c.get('actor').orgId, c.req.valid('param').id)),
    );
  });
  mount(app, formOps.update, async (c) =>
    send(c, await updateForm(c.get('deps'), c.get('actor'), c.req.valid('param').id, c.req.valid('json'))),
  );
  mountRemove(app, formOps.delete, deleteForm);
  mount(app, formOps.embed, async (c) =>
    send(c, (await formEmbed(c.get('deps'), c.get('actor'), c.req.valid('param').id)).embed),
  );
}
