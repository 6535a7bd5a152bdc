import type { OpenAPIHono } from '@hono/zod-openapi';
import { formOps } from '../../shared/contracts/forms.js';
import { type AppEnv, noContent, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { pageOf } from '../http/pagination.js';
import { buildEmbed, DEFAULT_FIELDS, fieldsFromSchema } from '../present/embed.js';
import { submitUrl } from '../present/forms.js';
import { createForm, deleteForm, formWithCounts, getFormRow, listForms, updateForm } from '../services/forms.js';
import { currentSchemaRow } from '../services/schemas.js';

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
  mount(app, formOps.delete, async (c) => {
    await deleteForm(c.get('deps'), c.get('actor'), c.req.valid('param').id);
    return noContent(c);
  });
  mount(app, formOps.embed, async (c) => {
    const deps = c.get('deps');
    const form = await getFormRow(deps.database.db, c.get('actor').orgId, c.req.valid('param').id);
    // The current schema's properties and ui hints; the defaults before one declares any field.
    const schema = await currentSchemaRow(deps.database.db, form);
    const fields = schema ? fieldsFromSchema(schema.jsonSchema, schema.ui) : [];
    const honeypot = String(form.settings.honeypot_field ?? '_gotcha');
    return send(c, buildEmbed(submitUrl(deps, form.id), fields.length ? fields : DEFAULT_FIELDS, honeypot));
  });
}
