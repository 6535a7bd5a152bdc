import { and, desc, eq, lt, max, sql } from 'drizzle-orm';
import type { ListQuery, z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type { InferredSchema, InferSchemaBody, PublishSchemaBody } from '../../shared/contracts/schemas.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { pageOf } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { FormRow, FormSchemaRow } from '../db/rows.js';
import { formSchemas, forms, submissions } from '../db/schema.js';
import type { Verdict } from '../domain/checks.js';
import { getFormRow } from '../domain/form-rows.js';
import { appendEvent } from '../events.js';
import { presentSchemaVersion, type SchemaVersionOut } from '../present/schemas.js';
import { inferSchema } from '../schemas/infer.js';
import { compileOrThrow, rememberValidator, type SchemaIssue, validateData } from '../schemas/validate.js';
import { closeOpenDrift, compareToSchema, type DriftFinding } from './drift-findings.js';
import { routeOf } from './next-steps.js';

export type { FormSchemaRow } from '../db/rows.js';

type Ui = Record<string, Record<string, unknown>>;

/** One version of one form; the form id already carries the tenant check of its caller. */
async function versionRow(db: Db, orgId: string, formId: string, version: number) {
  const [row] = await db
    .select()
    .from(formSchemas)
    .where(and(eq(formSchemas.orgId, orgId), eq(formSchemas.formId, formId), eq(formSchemas.version, version)))
    .limit(1);
  return row;
}

const noSchema = (formId: string) =>
  new ApiError('not_found', `Form ${formId} has no schema yet.`, {
    hint: `Publish one with ${routeOf(ops.schemas.publish, { id: formId })} {json_schema, ui?, changelog?}.`,
  });

/** GET /v1/forms/{id}/schema: the current version. */
export async function getCurrentSchema(deps: Deps, actor: Actor, formId: string) {
  const db = deps.database.db;
  const form = await getFormRow(db, actor.orgId, formId);
  const row =
    form.currentSchemaVersion === null
      ? undefined
      : await versionRow(db, actor.orgId, formId, form.currentSchemaVersion);
  if (!row) throw noSchema(formId);
  return presentSchemaVersion(row);
}

/**
 * Publishes version n+1 and makes it current. The schema is compiled before the transaction (CPU
 * only); the form row lock serializes concurrent publishes so versions stay gap-free and unique.
 */
export async function publishSchema(
  deps: Deps,
  actor: Actor,
  formId: string,
  body: z.output<typeof PublishSchemaBody>,
  opts: { inferred?: boolean } = {},
): Promise<SchemaVersionOut> {
  const validate = compileOrThrow(body.json_schema);
  const now = deps.now();
  const { row, dispatched } = await deps.database.db.transaction(async (tx) => {
    const [form] = await tx
      .select({ id: forms.id })
      .from(forms)
      .where(and(eq(forms.id, formId), eq(forms.orgId, actor.orgId)))
      .for('update');
    if (!form) throw notFound('form', formId);
    const [{ last }] = await tx
      .select({ last: max(formSchemas.version) })
      .from(formSchemas)
      .where(and(eq(formSchemas.orgId, actor.orgId), eq(formSchemas.formId, formId)));
    const version = (last ?? 0) + 1;
    const [inserted] = await tx
      .insert(formSchemas)
      .values({
        id: newId('formSchema'),
        orgId: actor.orgId,
        formId,
        version,
        jsonSchema: body.json_schema,
        fieldOrder: propertyOrder(body.json_schema),
        ui: body.ui ?? {},
        changelog: body.changelog ?? '',
        inferred: opts.inferred ?? body.inferred ?? false,
        createdBy: actor.keyId ?? actor.userId ?? 'unknown',
        createdAt: now,
      })
      .returning();
    await tx
      .update(forms)
      .set({ currentSchemaVersion: version, updatedAt: now })
      .where(and(eq(forms.id, formId), eq(forms.orgId, actor.orgId)));
    // The new version answers every open drift of the old one.
    await closeOpenDrift(tx, formId, 'schema_published', now);
    const event = await appendEvent(tx, {
      orgId: actor.orgId,
      type: 'form.schema.changed',
      subject: { form_id: formId },
      data: { version, changelog: inserted.changelog },
      now,
    });
    return { row: inserted, dispatched: event.dispatched };
  });
  rememberValidator(formId, row.version, validate);
  if (dispatched) deps.wake();
  return presentSchemaVersion(row);
}

/** GET /v1/forms/{id}/schema/versions: newest first; the cursor is a version's id. */
export async function listSchemaVersions(deps: Deps, actor: Actor, formId: string, query: z.output<typeof ListQuery>) {
  const db = deps.database.db;
  await getFormRow(db, actor.orgId, formId);
  const page = pageOf(query, 'formSchema');
  const conds = [eq(formSchemas.orgId, actor.orgId), eq(formSchemas.formId, formId)];
  // Ordered by version, not by id: the cursor row's version bounds the next page.
  if (query.cursor) {
    conds.push(
      lt(
        formSchemas.version,
        sql`(select ${formSchemas.version} from ${formSchemas} where ${formSchemas.id} = ${query.cursor} and ${formSchemas.formId} = ${formId})`,
      ),
    );
  }
  const rows = await db
    .select()
    .from(formSchemas)
    .where(and(...conds))
    .orderBy(desc(formSchemas.version))
    .limit(page.limit + 1);
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  return { data: items.map(presentSchemaVersion), next_cursor: more ? items[items.length - 1].id : null };
}

/** GET /s/{formId}/schema: the current schema of a managed form, for anyone (the form renders from it). */
export async function publicSchema(deps: Deps, formId: string) {
  const db = deps.database.db;
  const [form] = await db.select().from(forms).where(eq(forms.id, formId)).limit(1);
  if (!form) {
    throw new ApiError('not_found', `Form ${formId} does not exist.`, {
      hint: `Check the form id; ${routeOf(ops.forms.list)} lists your forms.`,
    });
  }
  const row =
    form.schemaMode !== 'managed' || form.currentSchemaVersion === null
      ? undefined
      : await versionRow(db, form.orgId, form.id, form.currentSchemaVersion);
  if (!row) {
    throw new ApiError('not_found', `Form ${formId} does not serve a public schema.`, {
      hint:
        `Only managed forms with a published schema serve one: publish with ${routeOf(ops.schemas.publish)} and set ` +
        `schema_mode "managed" with ${routeOf(ops.forms.update)}.`,
    });
  }
  return { form_id: form.id, version: row.version, json_schema: row.jsonSchema, ui: row.ui as Ui };
}

/** What the intake's schema step found: the version compared with, a violation to quarantine, drift. */
export interface IntakeSchemaResult {
  version: number;
  violation: { verdict: Verdict; issues: SchemaIssue[] } | null;
  drift: DriftFinding[];
}

/**
 * The intake's schema step, one read of the current version for both of its jobs. Every mode
 * compares the data's top level with the schema (drift findings; observe never blocks). Enforce
 * and managed also validate: a violation is a schema_violation quarantine with the validator's
 * issues. A stored version that no longer compiles quarantines too (nothing is lost; the issue says
 * why). Null when the form has no current schema.
 */
export async function intakeSchemaCheck(
  db: Db,
  form: FormRow,
  data: Record<string, unknown>,
): Promise<IntakeSchemaResult | null> {
  return checkAgainstSchema(form, (await currentSchemaRow(db, form)) ?? null, data);
}

/** intakeSchemaCheck against a version row already at hand (intake's cache keeps the current one). */
export function checkAgainstSchema(
  form: FormRow,
  row: FormSchemaRow | null,
  data: Record<string, unknown>,
): IntakeSchemaResult | null {
  if (!row || form.currentSchemaVersion === null) return null;
  const version = form.currentSchemaVersion;
  const drift = compareToSchema(row.jsonSchema, data);
  if (form.schemaMode !== 'enforce' && form.schemaMode !== 'managed') return { version, violation: null, drift };
  let issues: SchemaIssue[];
  try {
    const result = validateData(form.id, version, row.jsonSchema, data);
    if (result.valid) return { version, violation: null, drift };
    issues = result.issues;
  } catch (err) {
    issues = [{ path: '(schema)', message: `schema version ${version} does not compile: ${(err as Error).message}` }];
  }
  return { version, violation: { verdict: { status: 'quarantined', reason: 'schema_violation' }, issues }, drift };
}

/** The form's current version (undefined before the first publish); the form row carries the tenant check. */
export async function currentSchemaRow(db: Db, form: FormRow): Promise<FormSchemaRow | undefined> {
  if (form.currentSchemaVersion === null) return undefined;
  return versionRow(db, form.orgId, form.id, form.currentSchemaVersion);
}

const INFER_DEFAULT_LIMIT = 200;

/**
 * POST /v1/forms/{id}/schema/infer: a draft from the newest received submissions (test ones only
 * with include_test). Read-only: nothing is published and current_schema_version stays; the caller
 * reviews the draft and POSTs it to /v1/forms/{id}/schema, where `inferred: true` is stored.
 */
export async function inferFormSchema(
  deps: Deps,
  actor: Actor,
  formId: string,
  body: z.output<typeof InferSchemaBody>,
): Promise<z.output<typeof InferredSchema>> {
  const db = deps.database.db;
  await getFormRow(db, actor.orgId, formId);
  const conds = [
    eq(submissions.orgId, actor.orgId),
    eq(submissions.formId, formId),
    eq(submissions.status, 'received'),
  ];
  if (!body.include_test) conds.push(eq(submissions.test, false));
  // Ids are time-sortable, so the (form_id, id) index serves "newest first".
  const rows = await db
    .select({ data: submissions.data })
    .from(submissions)
    .where(and(...conds))
    .orderBy(desc(submissions.id))
    .limit(body.limit ?? INFER_DEFAULT_LIMIT);
  if (!rows.length) {
    const scope = body.include_test ? 'received submissions' : 'received submissions (test submissions excluded)';
    throw new ApiError('validation_failed', `Form ${formId} has no ${scope} to infer a schema from.`, {
      hint:
        `Send a few submissions to ${routeOf(ops.intake.submit, { formId })} first${body.include_test ? '' : ' (or pass include_test: true to read _test ones)'}, ` +
        `or write the schema yourself and publish it with ${routeOf(ops.schemas.publish, { id: formId })}.`,
      details: { issues: [{ path: '(form)', message: `no ${scope}` }] },
    });
  }
  const n = rows.length;
  const inferred = inferSchema(rows.map((r) => r.data));
  return {
    draft: {
      json_schema: inferred.json_schema,
      ui: inferred.ui,
      changelog: `Inferred from ${n} submission${n === 1 ? '' : 's'}`,
      inferred: true as const,
    },
    sample_size: n,
    fields: inferred.fields,
  };
}

/** The root property names of a schema in the order given (null when it has no properties object). */
export function propertyOrder(schema: Record<string, unknown>): string[] | null {
  const props = schema.properties;
  return props && typeof props === 'object' && !Array.isArray(props) ? Object.keys(props) : null;
}
