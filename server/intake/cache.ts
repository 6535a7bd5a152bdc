import { and, eq } from 'drizzle-orm';
import { ApiError } from '../core/errors.js';
import type { Database } from '../db/client.js';
import type { FormRow, FormSchemaRow, OrgRow } from '../db/rows.js';
import { forms, organizations, systemWebhooks } from '../db/schema.js';
import { currentSchemaRow } from '../services/schemas.js';
import { spamPolicyOf } from '../spam/policy.js';
import type { SpamPolicy } from '../spam/verdict.js';
import { type FieldRules, fieldRules } from './coerce.js';
import { type FormRoutes, readFormRoutes } from './plan.js';

/**
 * Everything intake reads about a form before it stores a submission, read once and kept: the
 * form and its organization, the routes it plans against (its own and its streams'), the system
 * webhooks subscribed to the events it appends, and its current schema version.
 *
 * `gen` is the organization's `config_gen` when this was read. Triggers bump it on every change to
 * the organization, its forms, routes, streams, stream sources and system webhooks, in whatever
 * process the change happens. Intake's writes carry the gen they decided with and refuse to store
 * when it has moved (the one-statement write checks it in the statement; the caller then reads the
 * entry again and decides again in a transaction, which reads the routes inside it should the gen
 * have moved once more), so a stale entry is never acted on.
 */
export interface IntakeEntry {
  gen: number;
  form: FormRow;
  org: OrgRow;
  routes: FormRoutes;
  /** ids of the enabled system webhooks subscribed to each event type intake appends */
  hooks: Record<'submission.received' | 'submission.quarantined', string[]>;
  schema: FormSchemaRow | null;
  /** how form-encoded values become the schema's types (coerce.ts); null without a current schema */
  rules: FieldRules | null;
  /** the spam verdict's policy: the form's settings.spam, its lists merged with its organization's */
  spam: SpamPolicy;
}

/** Thrown by a write that found the organization's config_gen moved on since its entry was read. */
export class StaleEntry extends Error {
  constructor() {
    super('the form or its routes changed while this submission was decided');
  }
}

const MAX_ENTRIES = 5_000;
const caches = new WeakMap<Database, Map<string, IntakeEntry>>();

function cacheOf(database: Database) {
  let cache = caches.get(database);
  if (!cache) {
    cache = new Map();
    caches.set(database, cache);
  }
  return cache;
}

export function formNotFound(formId: string) {
  return new ApiError('not_found', `Form ${formId} does not exist.`, {
    hint: 'Check the form id in the submit URL; GET /v1/forms lists your forms and their submit_url.',
  });
}

/** Reads a form's entry from the database (404 for an unknown form) and keeps it. */
export async function loadEntry(database: Database, formId: string): Promise<IntakeEntry> {
  const db = database.db;
  const [row] = await db
    .select({ form: forms, org: organizations })
    .from(forms)
    .innerJoin(organizations, eq(organizations.id, forms.orgId))
    .where(eq(forms.id, formId))
    .limit(1);
  const cache = cacheOf(database);
  if (!row) {
    cache.delete(formId);
    throw formNotFound(formId);
  }
  const { form, org } = row;
  const [routes, hookRows, schema] = await Promise.all([
    readFormRoutes(db, org.id, form),
    db
      .select({ id: systemWebhooks.id, events: systemWebhooks.events })
      .from(systemWebhooks)
      .where(and(eq(systemWebhooks.orgId, org.id), eq(systemWebhooks.enabled, true))),
    currentSchemaRow(db, form),
  ]);
  const subscribed = (type: string) => hookRows.filter((h) => h.events.includes(type)).map((h) => h.id);
  const entry: IntakeEntry = {
    gen: Number(org.configGen),
    form,
    org,
    routes,
    hooks: {
      'submission.received': subscribed('submission.received'),
      'submission.quarantined': subscribed('submission.quarantined'),
    },
    schema: schema ?? null,
    rules: schema && form.currentSchemaVersion !== null ? fieldRules(schema.jsonSchema) : null,
    spam: spamPolicyOf(form.settings, org.settings),
  };
  cache.delete(formId);
  cache.set(formId, entry);
  if (cache.size > MAX_ENTRIES) {
    const oldest = cache.keys().next();
    if (!oldest.done) cache.delete(oldest.value);
  }
  return entry;
}

/** The kept entry of a form, or a fresh read of it. Possibly stale: every write checks `gen`. */
export async function intakeEntry(database: Database, formId: string): Promise<IntakeEntry> {
  return cacheOf(database).get(formId) ?? loadEntry(database, formId);
}

/** The entry, checked current with one read of the organization's gen (a fresh read when it moved). */
export async function currentEntry(database: Database, formId: string): Promise<IntakeEntry> {
  const kept = cacheOf(database).get(formId);
  if (!kept) return loadEntry(database, formId);
  const [row] = await database.db
    .select({ gen: organizations.configGen })
    .from(organizations)
    .where(eq(organizations.id, kept.org.id));
  return row && Number(row.gen) === kept.gen ? kept : loadEntry(database, formId);
}
