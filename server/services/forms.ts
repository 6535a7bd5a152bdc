import { and, arrayContains, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { CreateFormBody, FormCreated, FormListQuery, UpdateFormBody } from '../../shared/contracts/forms.js';
import { ops } from '../../shared/contracts/index.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { FormRow } from '../db/rows.js';
import {
  attachments,
  deliveries,
  driftEvents,
  formSchemas,
  forms,
  organizations,
  projects,
  routes,
  streamSources,
  submissions,
} from '../db/schema.js';
import { limitsOf, slugify } from '../domain/orgs.js';
import { asksForPow } from '../domain/pow.js';
import { deleteChunks } from '../files/postgres.js';
import { buildEmbed, buildVerify, DEFAULT_FIELDS, type EmbedField, fieldsFromSchema } from '../present/embed.js';
import { type FormOut, presentForm, submitUrl } from '../present/forms.js';
import { checkSpamSettings } from '../spam/policy.js';
import { deliverySteps, routeOf } from './next-steps.js';
import { ensureProject } from './projects.js';
import { currentSchemaRow } from './schemas.js';
import { attachFromTemplate, type FormStream, getStreamRow, streamsOfForms } from './streams.js';

export type { FormRow } from '../db/rows.js';

import { getFormRow } from '../domain/form-rows.js';
import { deleteAttempts } from '../worker/attempts.js';

export { getFormRow } from '../domain/form-rows.js';

type Counts = FormOut['counts'];

/** Stored non-test submissions per form, and the newest one's time. */
export async function countsFor(db: Db, formIds: string[]): Promise<Map<string, Counts>> {
  const out = new Map<string, Counts>();
  if (!formIds.length) return out;
  const rows = await db
    .select({
      formId: submissions.formId,
      n: count(),
      last: sql<string | Date | null>`max(${submissions.receivedAt})`,
    })
    .from(submissions)
    .where(and(inArray(submissions.formId, formIds), eq(submissions.test, false)))
    .groupBy(submissions.formId);
  for (const r of rows) {
    out.set(r.formId, {
      submissions: Number(r.n),
      last_submission_at: r.last ? new Date(r.last).toISOString() : null,
    });
  }
  return out;
}

export async function formWithCounts(deps: Deps, f: FormRow): Promise<FormOut> {
  const [counts, streams] = await Promise.all([
    countsFor(deps.database.db, [f.id]),
    streamsOfForms(deps.database.db, f.orgId, [f]),
  ]);
  return presentForm(deps, f, counts.get(f.id), streams.get(f.id));
}

export function formCreated(deps: Deps, f: FormRow, streams: FormStream[] = []): z.output<typeof FormCreated> {
  const url = submitUrl(deps, f.id);
  return {
    ...presentForm(deps, f, undefined, streams),
    embed: buildEmbed(url),
    verify: buildVerify(url, f.settings.allowed_origins),
    next: deliverySteps(f.id, {
      destination: 'Route submissions somewhere: create a destination (email, telegram or webhook) first',
      route: 'Connect the form to the destination',
      test: 'Prove delivery with a test submission; the answer lists delivery ids',
    }),
  };
}

/** Creates a form (its project too when missing); idempotent by (project, slug) with if_exists "return". */
export async function createForm(
  deps: Deps,
  actor: Actor,
  body: z.output<typeof CreateFormBody>,
): Promise<{ created: boolean; form: z.output<typeof FormCreated> }> {
  const db = deps.database.db;
  // The stream is checked before anything is created: an unknown id is a 404 and no form.
  if (body.from_template !== undefined) {
    const stream = await getStreamRow(db, actor.orgId, body.from_template);
    if (stream.currentSchemaVersion === null) {
      throw new ApiError('stream_schema_missing', `Stream ${stream.id} has no schema to template a form from.`, {
        hint: `Publish one with ${routeOf(ops.streams.publishSchema, { id: stream.id })} first.`,
      });
    }
  }
  const project = await ensureProject(db, actor.orgId, body.project ?? 'default');
  const slug = body.slug ?? slugify(body.name);
  const existing = await findForm(db, actor.orgId, project.id, slug);
  if (existing) return existingOrConflict(deps, existing, slug, body.if_exists);
  await checkFormLimit(deps, actor.orgId);
  const inserted = await db
    .insert(forms)
    .values({
      id: newId('form'),
      orgId: actor.orgId,
      projectId: project.id,
      slug,
      name: body.name,
      tags: body.tags ?? [],
      schemaMode: body.schema_mode ?? 'observe',
    })
    .onConflictDoNothing()
    .returning();
  if (inserted.length) {
    let form = inserted[0];
    if (body.from_template !== undefined) {
      await attachFromTemplate(deps, actor, form, body.from_template);
      form = await getFormRow(db, actor.orgId, form.id);
    }
    const streams = await streamsOfForms(db, actor.orgId, [form]);
    return { created: true, form: formCreated(deps, form, streams.get(form.id)) };
  }
  const raced = await findForm(db, actor.orgId, project.id, slug);
  return existingOrConflict(deps, raced as FormRow, slug, body.if_exists);
}

async function existingOrConflict(
  deps: Deps,
  f: FormRow,
  slug: string,
  ifExists?: string,
): Promise<{ created: boolean; form: z.output<typeof FormCreated> }> {
  if (ifExists === 'return')
    return { created: false, form: { ...formCreated(deps, f), ...(await formWithCounts(deps, f)) } };
  throw new ApiError('conflict', `A form with slug "${slug}" exists already in this project.`, {
    hint: 'Pass if_exists: "return" to get the existing form, or choose another name or slug.',
    details: { existing_id: f.id },
  });
}

async function findForm(db: Db, orgId: string, projectId: string, slug: string) {
  const [row] = await db
    .select()
    .from(forms)
    .where(and(eq(forms.orgId, orgId), eq(forms.projectId, projectId), eq(forms.slug, slug)))
    .limit(1);
  return row;
}

export async function checkFormLimit(deps: Deps, orgId: string) {
  const db = deps.database.db;
  const [org] = await db.select().from(organizations).where(eq(organizations.id, orgId));
  const max = limitsOf(deps.config, org, deps.now()).forms;
  if (max === null) return;
  const [{ n }] = await db
    .select({ n: count() })
    .from(forms)
    .where(and(eq(forms.orgId, orgId), eq(forms.sandbox, false)));
  if (Number(n) >= max) {
    throw new ApiError('plan_limit_reached', `The plan allows ${max} forms and the organization has ${n}.`, {
      hint: `Delete a form you no longer use, or move to a larger plan (${routeOf(ops.me.get)} shows limits).`,
      details: { limit: 'forms', max, used: Number(n) },
    });
  }
}

export async function listForms(
  deps: Deps,
  actor: Actor,
  page: Page,
  filter: Pick<z.output<typeof FormListQuery>, 'project' | 'tag' | 'status'>,
) {
  const db = deps.database.db;
  const conds = [eq(forms.orgId, actor.orgId), eq(forms.sandbox, false), page.after(forms.id)];
  if (filter.project) {
    const [p] = await db
      .select({ id: projects.id })
      .from(projects)
      .where(
        and(eq(projects.orgId, actor.orgId), or(eq(projects.id, filter.project), eq(projects.slug, filter.project))),
      );
    conds.push(eq(forms.projectId, p?.id ?? '-'));
  }
  if (filter.tag) conds.push(arrayContains(forms.tags, [filter.tag]));
  if (filter.status) conds.push(eq(forms.status, filter.status));
  const rows = await db
    .select()
    .from(forms)
    .where(and(...conds))
    .orderBy(desc(forms.id))
    .limit(page.limit + 1);
  const [counts, streams] = await Promise.all([
    countsFor(
      db,
      rows.map((r) => r.id),
    ),
    streamsOfForms(db, actor.orgId, rows),
  ]);
  return pageResult(rows, page, (f) => presentForm(deps, f, counts.get(f.id), streams.get(f.id)));
}

/** PATCH: settings merge key by key (null removes a key); the rest replaces. */
export async function updateForm(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateFormBody>,
): Promise<FormOut> {
  const db = deps.database.db;
  const current = await getFormRow(db, actor.orgId, id);
  let settings = current.settings;
  checkSpamSettings(body.settings?.spam, 'settings.spam');
  if (body.settings) {
    settings = { ...current.settings };
    for (const [k, v] of Object.entries(body.settings)) {
      if (v === null) delete settings[k];
      else settings[k] = v;
    }
  }
  const [row] = await db
    .update(forms)
    .set({
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.tags !== undefined ? { tags: body.tags } : {}),
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.schema_mode !== undefined ? { schemaMode: body.schema_mode } : {}),
      settings,
      updatedAt: deps.now(),
    })
    .where(and(eq(forms.id, id), eq(forms.orgId, actor.orgId)))
    .returning();
  return formWithCounts(deps, row);
}

/**
 * Deletes a form with its submissions, attachments (files too), routes, deliveries, schema
 * versions, drift and its explicit stream sources (selectors stay: they match by tag or project).
 */
export async function deleteForm(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  await getFormRow(db, actor.orgId, id);
  const files = await db
    .select({ key: attachments.storageKey })
    .from(attachments)
    .where(and(eq(attachments.orgId, actor.orgId), eq(attachments.formId, id)));
  await db.transaction(async (tx) => {
    const org = actor.orgId;
    // Taken first: a route or stream source being attached (they lock the form) finishes before, or finds no form after.
    await tx
      .select({ id: forms.id })
      .from(forms)
      .where(and(eq(forms.id, id), eq(forms.orgId, org)))
      .for('update');
    await deleteAttempts(tx, and(eq(deliveries.orgId, org), eq(deliveries.formId, id)));
    await tx.delete(deliveries).where(and(eq(deliveries.orgId, org), eq(deliveries.formId, id)));
    await tx.delete(routes).where(and(eq(routes.orgId, org), eq(routes.formId, id)));
    const gone = await tx
      .delete(attachments)
      .where(and(eq(attachments.orgId, org), eq(attachments.formId, id)))
      .returning({ id: attachments.id });
    await deleteChunks(
      tx,
      gone.map((f) => f.id),
    );
    await tx.delete(submissions).where(and(eq(submissions.orgId, org), eq(submissions.formId, id)));
    await tx.delete(streamSources).where(and(eq(streamSources.orgId, org), eq(streamSources.formId, id)));
    await tx.delete(driftEvents).where(and(eq(driftEvents.orgId, org), eq(driftEvents.formId, id)));
    await tx.delete(formSchemas).where(and(eq(formSchemas.orgId, org), eq(formSchemas.formId, id)));
    await tx.delete(forms).where(and(eq(forms.id, id), eq(forms.orgId, org)));
  });
  await Promise.all(files.map((f) => deps.storage.remove(f.key).catch(() => {})));
}

/**
 * GET /v1/forms/{id}/embed (and the dashboard): the snippets built from the current schema's
 * properties and ui hints, or the default fields before a schema declares any; `fields` are the
 * controls they hold (the dashboard's test submission fills them with sample values).
 */
export async function formEmbed(deps: Deps, actor: Actor, id: string) {
  const form = await getFormRow(deps.database.db, actor.orgId, id);
  return { form, ...(await embedFor(deps, form)) };
}

/**
 * A form's embed snippets (and the fields they hold): from the current schema's properties and ui
 * hints, or the default fields before one declares any, with the form's honeypot.
 */
export async function embedFor(deps: Deps, form: FormRow) {
  const schema = await currentSchemaRow(deps.database.db, form);
  const declared = schema ? fieldsFromSchema(schema.jsonSchema, schema.ui) : [];
  const fields: EmbedField[] = declared.length ? declared : DEFAULT_FIELDS;
  const honeypot = String(form.settings.honeypot_field ?? '_gotcha');
  const pow = asksForPow(form.settings.challenge);
  return { fields, embed: buildEmbed(submitUrl(deps, form.id), fields, honeypot, { pow }) };
}

/** Id and name of the organization's forms (not sandboxes), newest first: the dashboard's form filter. */
export async function formNames(db: Db, orgId: string, limit = 500) {
  return db
    .select({ id: forms.id, name: forms.name })
    .from(forms)
    .where(and(eq(forms.orgId, orgId), eq(forms.sandbox, false)))
    .orderBy(desc(forms.id))
    .limit(limit);
}
