import type { Deps } from '../http/context.js';
import { buildEmbed, DEFAULT_FIELDS, fieldsFromSchema } from '../present/embed.js';
import { type FormRow, submitUrl } from './forms.js';
import { currentSchemaRow } from './schemas.js';

/**
 * GET /v1/forms/{id}/embed (and the dashboard's form page): snippets built from the current schema's
 * properties and ui hints, or the default fields before one declares any, with the form's honeypot.
 */
export async function formEmbed(deps: Deps, form: FormRow) {
  const schema = await currentSchemaRow(deps.database.db, form);
  const fields = schema ? fieldsFromSchema(schema.jsonSchema, schema.ui) : [];
  const honeypot = String(form.settings.honeypot_field ?? '_gotcha');
  return buildEmbed(submitUrl(deps, form.id), fields.length ? fields : DEFAULT_FIELDS, honeypot);
}
