import { and, asc, eq, sql } from 'drizzle-orm';
import type { DRIFT_KINDS } from '../../shared/contracts/drift.js';
import { newId } from '../../shared/ids.js';
import { isObj } from '../../shared/objects.js';
import type { Db } from '../db/client.js';
import { driftEvents, forms } from '../db/schema.js';
import { appendEvent } from '../events.js';
import { PATTERN_BUDGET_MS, type PatternTest, tenantPattern, withPatternBudget } from '../schemas/patterns.js';

export type DriftKind = (typeof DRIFT_KINDS)[number];

export interface DriftFinding {
  field: string;
  kind: DriftKind;
  details: Record<string, unknown>;
}

/** What a submission keeps in submissions.drift: the drift rows it raised or counted in. */
export interface DriftRef {
  drift_id: string;
  field: string;
  kind: DriftKind;
}

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/** The JSON type of a parsed value ("integer" for whole numbers, which also fit "number"). */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const fits = (observed: string, declared: string) =>
  observed === declared || (observed === 'integer' && declared === 'number');

/** patternProperties keys as regexes; one that does not compile as a JS regex declares nothing here. */
function patterns(schema: Record<string, unknown>): PatternTest[] {
  if (!isObj(schema.patternProperties)) return [];
  const out: PatternTest[] = [];
  for (const p of Object.keys(schema.patternProperties)) {
    try {
      out.push(tenantPattern(p, 'u'));
    } catch {
      // ajv compiled it with its own options; a pattern JS cannot read is skipped, never fatal at intake.
    }
  }
  return out;
}

/**
 * Compares one submission's data with a schema's top level (nested objects are not walked):
 * - new_field: a data key the root's `properties` (or `patternProperties`) does not declare, only when
 *   the schema declares properties at all;
 * - missing_field: a root `required` name absent from the data (present with "" or null is not absent);
 * - type_change: a present value whose JSON type fits none of the property's declared `type`s. Types
 *   are the parsed ones: a urlencoded "42" is a string, so it only drifts from a declared integer the
 *   same way validation would reject it. Properties without a plain `type` ($ref, anyOf…) are not typed.
 * Findings come sorted by (field, kind), the order their rows are locked in.
 */
export function compareToSchema(jsonSchema: unknown, data: Record<string, unknown>): DriftFinding[] {
  // One budget for all the key tests against tenant patternProperties (see patterns.ts).
  return withPatternBudget(PATTERN_BUDGET_MS, () => compare(jsonSchema, data));
}

function compare(jsonSchema: unknown, data: Record<string, unknown>): DriftFinding[] {
  if (!isObj(jsonSchema)) return [];
  const props = isObj(jsonSchema.properties) ? jsonSchema.properties : null;
  const required = Array.isArray(jsonSchema.required)
    ? jsonSchema.required.filter((r): r is string => typeof r === 'string')
    : [];
  const pats = patterns(jsonSchema);
  const out: DriftFinding[] = [];
  for (const [field, value] of Object.entries(data)) {
    const observed = jsonType(value);
    const declared = props && Object.hasOwn(props, field) ? props[field] : undefined;
    if (props && declared === undefined) {
      if (!pats.some((re) => re.test(field)))
        out.push({ field, kind: 'new_field', details: { observed_type: observed } });
      continue;
    }
    if (!isObj(declared)) continue;
    const types = ([] as unknown[]).concat(declared.type ?? []).filter((t): t is string => JSON_TYPES.has(t as string));
    if (types.length && !types.some((t) => fits(observed, t))) {
      out.push({ field, kind: 'type_change', details: { expected: types, observed } });
    }
  }
  for (const field of new Set(required)) {
    if (!Object.hasOwn(data, field)) out.push({ field, kind: 'missing_field', details: { required: true } });
  }
  return out.sort((a, b) => (a.field === b.field ? a.kind.localeCompare(b.kind) : a.field < b.field ? -1 : 1));
}

export interface RecordDriftInput {
  orgId: string;
  formId: string;
  submissionId: string;
  schemaVersion: number;
  findings: DriftFinding[];
  now: Date;
}

/**
 * Records one submission's findings inside the intake transaction. Each finding counts into the
 * form's open row for (field, kind), opening one when there is none; `drift.detected` is appended
 * only when a row opens, so a flood of the same drift is one event with a count. A finding that was
 * dismissed under this same schema version counts into the dismissed row and stays silent until a
 * new version is published. Returns the refs to store on the submission and how many system-webhook
 * deliveries the events planned (wake the worker after commit when > 0).
 */
export async function recordDrift(tx: Db, input: RecordDriftInput): Promise<{ refs: DriftRef[]; dispatched: number }> {
  const refs: DriftRef[] = [];
  let dispatched = 0;
  if (!input.findings.length) return { refs, dispatched };
  // The form row in share mode: a publish (which locks it for update and closes open drift) either
  // finished before, and then the data was compared with a superseded version, or waits for this commit.
  const [form] = await tx
    .select({ version: forms.currentSchemaVersion })
    .from(forms)
    .where(eq(forms.id, input.formId))
    .for('share');
  if (!form || form.version !== input.schemaVersion) return { refs, dispatched };

  for (const f of input.findings) {
    const seen = { count: sql`${driftEvents.count} + 1`, lastSubmissionId: input.submissionId, lastSeenAt: input.now };
    const [dismissed] = await tx
      .update(driftEvents)
      .set(seen)
      .where(
        eq(
          driftEvents.id,
          sql`(select ${driftEvents.id} from ${driftEvents} where ${and(
            eq(driftEvents.formId, input.formId),
            eq(driftEvents.field, f.field),
            eq(driftEvents.kind, f.kind),
            eq(driftEvents.status, 'dismissed'),
            eq(driftEvents.schemaVersion, input.schemaVersion),
          )} order by ${asc(driftEvents.id)} limit 1)`,
        ),
      )
      .returning({ id: driftEvents.id });
    if (dismissed) {
      refs.push({ drift_id: dismissed.id, field: f.field, kind: f.kind });
      continue;
    }
    // One open row per (form, field, kind): the partial unique index is the arbiter under concurrency.
    const [row] = await tx
      .insert(driftEvents)
      .values({
        id: newId('drift'),
        orgId: input.orgId,
        formId: input.formId,
        field: f.field,
        kind: f.kind,
        details: f.details,
        schemaVersion: input.schemaVersion,
        status: 'open',
        count: 1,
        firstSubmissionId: input.submissionId,
        lastSubmissionId: input.submissionId,
        createdAt: input.now,
        lastSeenAt: input.now,
      })
      .onConflictDoUpdate({
        target: [driftEvents.formId, driftEvents.field, driftEvents.kind],
        targetWhere: sql`status = 'open'`,
        set: seen,
      })
      .returning({ id: driftEvents.id, count: driftEvents.count });
    refs.push({ drift_id: row.id, field: f.field, kind: f.kind });
    if (row.count !== 1) continue;
    const event = await appendEvent(tx, {
      orgId: input.orgId,
      type: 'drift.detected',
      subject: { form_id: input.formId, submission_id: input.submissionId, drift_id: row.id },
      data: { field: f.field, kind: f.kind, details: f.details, schema_version: input.schemaVersion },
      now: input.now,
    });
    dispatched += event.dispatched;
  }
  return { refs, dispatched };
}

/** Closes every open drift row of a form (a new schema version answers them). */
export async function closeOpenDrift(tx: Db, formId: string, reason: string, now: Date): Promise<number> {
  const closed = await tx
    .update(driftEvents)
    .set({ status: 'closed', closedAt: now, closedReason: reason })
    .where(and(eq(driftEvents.formId, formId), eq(driftEvents.status, 'open')))
    .returning({ id: driftEvents.id });
  return closed.length;
}
