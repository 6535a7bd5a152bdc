import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

export const organizations = pgTable('organizations', {
  id: text('id').primaryKey(),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  personal: boolean('personal').notNull().default(false),
  ownerUserId: text('owner_user_id'),
  plan: text('plan').notNull(),
  planSource: text('plan_source').notNull(),
  planExpiresAt: ts('plan_expires_at'),
  planNote: text('plan_note'),
  timezone: text('timezone').notNull().default('UTC'),
  /**
   * Bumped by triggers (migration 0007) whenever anything intake reads for this organization
   * changes: the organization itself, its forms, routes, streams, stream sources and system
   * webhooks. The intake cache keeps it and the one-statement write refuses a stale one.
   */
  configGen: bigint('config_gen', { mode: 'number' }).notNull().default(0),
  /** Organization-wide settings: `spam` (block/allow lists merged into every form's, migration 0017). */
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: createdAt(),
});

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

export const memberships = pgTable(
  'memberships',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    userId: text('user_id').notNull(),
    role: text('role').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('memberships_org_user').on(t.orgId, t.userId), index('memberships_user').on(t.userId)],
);

export const sessions = pgTable('sessions', {
  id: text('id').primaryKey(),
  tokenHash: text('token_hash').notNull().unique(),
  userId: text('user_id').notNull(),
  activeOrgId: text('active_org_id').notNull(),
  expiresAt: ts('expires_at').notNull(),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull().unique(),
    scopes: text('scopes').array().notNull(),
    createdByUserId: text('created_by_user_id'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [index('api_keys_org').on(t.orgId, t.id)],
);

export const emailCodes = pgTable(
  'email_codes',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    codeHash: text('code_hash').notNull(),
    ip: text('ip').notNull(),
    attempts: integer('attempts').notNull().default(0),
    expiresAt: ts('expires_at').notNull(),
    consumedAt: ts('consumed_at'),
    createdAt: createdAt(),
  },
  (t) => [index('email_codes_email').on(t.email, t.createdAt), index('email_codes_ip').on(t.ip, t.createdAt)],
);

/**
 * The tries at an email code (verify-code, sign-in): one row per request carrying a code, taken before the
 * code is compared (wrong until it proves right). The address budget counts its wrong rows in the window,
 * the per-IP limit every row of the IP (server/services/code-tries.ts).
 */
export const codeTries = pgTable(
  'code_tries',
  {
    id: text('id').primaryKey(),
    email: text('email'),
    ip: text('ip').notNull(),
    wrong: boolean('wrong').notNull().default(true),
    createdAt: createdAt(),
  },
  (t) => [
    index('code_tries_email').on(t.email, t.createdAt).where(sql`wrong`),
    index('code_tries_ip').on(t.ip, t.createdAt),
  ],
);

/** Stored responses of POST requests that carried an Idempotency-Key, per organization (or scope). */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    status: integer('status'),
    responseBody: text('response_body'),
    responseType: text('response_type'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] })],
);

export const projects = pgTable(
  'projects',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('projects_org_slug').on(t.orgId, t.slug)],
);

export const forms = pgTable(
  'forms',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id').notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    status: text('status').notNull().default('active'),
    schemaMode: text('schema_mode').notNull().default('observe'),
    currentSchemaVersion: integer('current_schema_version'),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
    sandbox: boolean('sandbox').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('forms_org_project_slug').on(t.orgId, t.projectId, t.slug), index('forms_org').on(t.orgId, t.id)],
);

export const submissions = pgTable(
  'submissions',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    formId: text('form_id').notNull(),
    status: text('status').notNull(),
    quarantineReason: text('quarantine_reason'),
    test: boolean('test').notNull().default(false),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    formSchemaVersion: integer('form_schema_version'),
    spam: jsonb('spam')
      .$type<{ score: number; reasons: string[]; signals?: { code: string; text: string; weight: number }[] }>()
      .notNull(),
    meta: jsonb('meta').$type<Record<string, unknown>>().notNull(),
    issues: jsonb('issues').$type<unknown[]>(),
    /** The drift this submission raised: [{drift_id, field, kind}] (null when none). */
    drift: jsonb('drift').$type<{ drift_id: string; field: string; kind: string }[]>(),
    clientIp: text('client_ip').notNull(),
    idempotencyKey: text('idempotency_key'),
    subjectHint: text('subject_hint'),
    receivedAt: ts('received_at').notNull().defaultNow(),
    /** settings.unique: the submission that first claimed this one's values (quarantined `duplicate`). */
    duplicateOf: text('duplicate_of'),
    /**
     * What `q` searches: the id and every string and number of data at any depth (numbers as
     * written), lowercased, as the text of one JSON array (SQL function formsvc_search_text).
     * Written off the intake path by the worker's search indexer (server/worker/search-index.ts);
     * null until then, and a null row is searched by computing the same text on the fly.
     */
    searchText: text('search_text'),
    /**
     * No longer written (migration 0026 moved velocity to spam_sightings): releases before it
     * stored a hash of the submission's long text values and of its first email address here. Kept,
     * with their partial indexes (empty, so free on insert), so that nodes of an older release keep
     * working during a rolling restart; a later release drops them.
     */
    spamFingerprint: text('spam_fingerprint'),
    spamAddress: text('spam_address'),
    /** Double opt-in: `{confirmed_at, ip, user_agent}` once the submitter confirmed (null until then). */
    confirmation: jsonb('confirmation').$type<{ confirmed_at: string; ip: string; user_agent: string | null }>(),
  },
  (t) => [
    index('submissions_org').on(t.orgId, t.id),
    // pg_trgm: `search_text LIKE '%word%'` for every word of q is answered from this index. Partial,
    // so an insert (search_text null) adds nothing to it: intake pays no trigram cost.
    index('submissions_search').using('gin', sql`${t.searchText} gin_trgm_ops`).where(sql`search_text is not null`),
    // The rows the indexer has not reached yet (few: seconds of traffic), by organization for q's fallback.
    index('submissions_unindexed').on(t.orgId, t.id).where(sql`search_text is null`),
    index('submissions_form').on(t.formId, t.id),
    index('submissions_rate').on(t.formId, t.clientIp, t.receivedAt),
    // The monthly quota count and retention both read an organization's submissions by time.
    index('submissions_org_received').on(t.orgId, t.receivedAt),
    uniqueIndex('submissions_idem').on(t.formId, t.idempotencyKey).where(sql`idempotency_key is not null`),
    index('submissions_spam_fingerprint')
      .on(t.orgId, t.spamFingerprint, t.receivedAt)
      .where(sql`spam_fingerprint is not null`),
    index('submissions_spam_address').on(t.orgId, t.spamAddress, t.receivedAt).where(sql`spam_address is not null`),
    // Unconfirmed double opt-in submissions, for the cleanup of those never confirmed.
    index('submissions_unconfirmed').on(t.receivedAt).where(sql`quarantine_reason = 'pending_confirmation'`),
  ],
);

/**
 * settings.unique's claims: the first received submission of each (form, normalised values), until
 * `expires_at` (null: for good). Taken in the intake transaction (intake/unique.ts); the foreign key
 * to submissions is deferred (the claim comes first) and cascades on delete.
 */
export const uniqueClaims = pgTable(
  'unique_claims',
  {
    formId: text('form_id').notNull(),
    key: text('key').notNull(),
    submissionId: text('submission_id').notNull(),
    expiresAt: ts('expires_at'),
  },
  (t) => [
    primaryKey({ name: 'unique_claims_pkey', columns: [t.formId, t.key] }),
    index('unique_claims_submission').on(t.submissionId),
  ],
);

export const attachments = pgTable(
  'attachments',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    formId: text('form_id').notNull(),
    submissionId: text('submission_id').notNull(),
    fieldName: text('field_name').notNull(),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    sha256: text('sha256').notNull(),
    storageKey: text('storage_key').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('attachments_submission').on(t.submissionId), index('attachments_org').on(t.orgId)],
);

/** bytea as Buffer on both drivers (postgres.js gives a Buffer, PGlite a Uint8Array). */
const bytea = customType<{ data: Buffer; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
});

/** The bytes of attachments kept in the database (ATTACHMENT_STORAGE=postgres), in order by seq. */
export const attachmentChunks = pgTable(
  'attachment_chunks',
  {
    fileId: text('file_id').notNull(),
    seq: integer('seq').notNull(),
    bytes: bytea('bytes').notNull(),
  },
  (t) => [primaryKey({ name: 'attachment_chunks_pk', columns: [t.fileId, t.seq] })],
);

export const destinations = pgTable(
  'destinations',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    type: text('type').notNull(),
    name: text('name').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull(),
    health: text('health').notNull().default('unknown'),
    verified: boolean('verified').notNull().default(false),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    lastFailingEventAt: ts('last_failing_event_at'),
    lastDeadEventAt: ts('last_dead_event_at'),
    /** false: the worker attempts none of its deliveries; they wait pending, not due, until re-enabled */
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason'),
    /** the first failure of the current unbroken run of failures (null after a success) */
    failingSince: ts('failing_since'),
    /** 'pending': created or re-pointed by an API key under settings.approve_destinations "keys"; null: approved or never asked */
    approval: text('approval'),
    /** the key that asked (id, and its name then), and when */
    approvalKeyId: text('approval_key_id'),
    approvalKeyName: text('approval_key_name'),
    approvalRequestedAt: ts('approval_requested_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('destinations_org').on(t.orgId, t.id),
    index('destinations_approval_pending').on(t.orgId).where(sql`approval = 'pending'`),
  ],
);

export const routes = pgTable(
  'routes',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    formId: text('form_id'),
    streamId: text('stream_id'),
    destinationId: text('destination_id').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    mode: jsonb('mode').$type<Record<string, unknown>>().notNull(),
    window: jsonb('window').$type<{ from: string | null; until: string | null }>().notNull(),
    quality: jsonb('quality').$type<{ exclude_spam: boolean; exclude_quarantined: boolean }>().notNull(),
    filter: text('filter'),
    transform: text('transform'),
    /** A validated condition (domain/match.ts) a submission must meet to be delivered; null = all. */
    match: jsonb('match').$type<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [
    index('routes_org').on(t.orgId, t.id),
    index('routes_form').on(t.formId),
    index('routes_destination').on(t.destinationId),
  ],
);

export const deliveries = pgTable(
  'deliveries',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    submissionId: text('submission_id'),
    routeId: text('route_id').notNull(),
    destinationId: text('destination_id').notNull(),
    formId: text('form_id'),
    status: text('status').notNull(),
    skipReason: text('skip_reason'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    nextAttemptAt: ts('next_attempt_at'),
    leaseUntil: ts('lease_until'),
    schemaVersion: integer('schema_version'),
    eventType: text('event_type').notNull().default('submission.received'),
    periodKey: text('period_key'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    lastResponse: jsonb('last_response').$type<Record<string, unknown>>(),
    lastError: text('last_error'),
    createdAt: createdAt(),
    sentAt: ts('sent_at'),
    /** When a `held` (over-quota) delivery was released to `pending`: its submission counts in that month. */
    releasedAt: ts('released_at'),
  },
  (t) => [
    index('deliveries_org').on(t.orgId, t.id),
    index('deliveries_due').on(t.status, t.nextAttemptAt),
    index('deliveries_held').on(t.orgId, t.createdAt).where(sql`status = 'held'`),
    index('deliveries_released').on(t.orgId, t.releasedAt).where(sql`released_at is not null`),
    // Deliveries waiting for a disabled destination (pending, not due): re-enabling finds them here.
    index('deliveries_parked').on(t.destinationId).where(sql`status = 'pending' and next_attempt_at is null`),
    // Also the index of a submission's deliveries (its leading column).
    uniqueIndex('deliveries_submission_route').on(t.submissionId, t.routeId),
    // Digest deliveries only: instant ones have no period (and cost no entry).
    uniqueIndex('deliveries_route_period').on(t.routeId, t.periodKey).where(sql`period_key is not null`),
    // Mail to submitters (autoresponses, confirmations): their abuse limits count recent ones here.
    index('deliveries_submitter').on(t.orgId, t.createdAt).where(sql`destination_id = 'submitter'`),
  ],
);

/**
 * Every settled attempt of a route delivery (migration 0023), for explain: written by the worker
 * in the statement or transaction that settles the attempt; deleted before its delivery and by
 * erasure (server/worker/attempts.ts: no foreign key, whose checks doubled an insert's cost). `n` is the attempt's number in its run (a manual retry starts again at 1).
 */
export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    orgId: text('org_id').notNull(),
    deliveryId: text('delivery_id').notNull(),
    n: integer('n').notNull(),
    startedAt: ts('started_at').notNull(),
    latencyMs: integer('latency_ms').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    nextAttemptAt: ts('next_attempt_at'),
    /** sent, failed (tried again at next_attempt_at) or dead */
    outcome: text('outcome').notNull(),
  },
  (t) => [index('delivery_attempts_delivery').on(t.deliveryId, t.id)],
);

export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    type: text('type').notNull(),
    subject: jsonb('subject').$type<Record<string, unknown>>().notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('events_org').on(t.orgId, t.id), index('events_org_type').on(t.orgId, t.type, t.id)],
);

/** Organization-level subscriptions to the event log (distinct from route destinations). */
export const systemWebhooks = pgTable(
  'system_webhooks',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    secret: text('secret'),
    enabled: boolean('enabled').notNull().default(true),
    health: text('health').notNull().default('unknown'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    disabledReason: text('disabled_reason'),
    failingSince: ts('failing_since'),
    /** 'pending': created or re-pointed by an API key under settings.approve_destinations "keys"; null: approved or never asked */
    approval: text('approval'),
    /** the key that asked (id, and its name then), and when */
    approvalKeyId: text('approval_key_id'),
    approvalKeyName: text('approval_key_name'),
    approvalRequestedAt: ts('approval_requested_at'),
    createdAt: createdAt(),
  },
  (t) => [index('system_webhooks_org').on(t.orgId, t.id)],
);

/** One row per (event, subscribed system webhook): the same outbox rules as deliveries. */
export const systemWebhookDeliveries = pgTable(
  'system_webhook_deliveries',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    webhookId: text('webhook_id').notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    nextAttemptAt: ts('next_attempt_at'),
    leaseUntil: ts('lease_until'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    lastResponse: jsonb('last_response').$type<Record<string, unknown>>(),
    lastError: text('last_error'),
    createdAt: createdAt(),
    sentAt: ts('sent_at'),
  },
  (t) => [
    index('system_webhook_deliveries_webhook').on(t.webhookId, t.id),
    index('system_webhook_deliveries_due').on(t.status, t.nextAttemptAt),
    uniqueIndex('system_webhook_deliveries_event').on(t.eventId, t.webhookId),
  ],
);

/** Immutable form schema versions: publishing inserts version n+1, nothing ever updates a row. */
export const formSchemas = pgTable(
  'form_schemas',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    formId: text('form_id').notNull(),
    version: integer('version').notNull(),
    jsonSchema: jsonb('json_schema').$type<Record<string, unknown>>().notNull(),
    /** The root properties in the order they were published (jsonb does not keep key order). */
    fieldOrder: text('field_order').array(),
    ui: jsonb('ui').$type<Record<string, unknown>>().notNull().default({}),
    changelog: text('changelog').notNull().default(''),
    inferred: boolean('inferred').notNull().default(false),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('form_schemas_org_form_version').on(t.orgId, t.formId, t.version)],
);

/**
 * Drift between a form's declared schema and real traffic: one open row per (form, field, kind),
 * counting the submissions that raised it, until a new version is published or it is dismissed.
 */
export const driftEvents = pgTable(
  'drift_events',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    formId: text('form_id').notNull(),
    field: text('field').notNull(),
    kind: text('kind').notNull(),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    schemaVersion: integer('schema_version'),
    status: text('status').notNull().default('open'),
    count: integer('count').notNull().default(1),
    firstSubmissionId: text('first_submission_id').notNull(),
    lastSubmissionId: text('last_submission_id').notNull(),
    createdAt: createdAt(),
    lastSeenAt: ts('last_seen_at').notNull().defaultNow(),
    closedAt: ts('closed_at'),
    closedReason: text('closed_reason'),
  },
  (t) => [
    index('drift_events_org').on(t.orgId, t.id),
    index('drift_events_form').on(t.formId, t.status),
    uniqueIndex('drift_events_open').on(t.formId, t.field, t.kind).where(sql`status = 'open'`),
  ],
);

/** Streams: many forms under one versioned output schema. */
export const streams = pgTable(
  'streams',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    slug: text('slug').notNull(),
    name: text('name').notNull(),
    currentSchemaVersion: integer('current_schema_version'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('streams_org_slug').on(t.orgId, t.slug), index('streams_org').on(t.orgId, t.id)],
);

/** Immutable stream schema versions, like form_schemas. */
export const streamSchemas = pgTable(
  'stream_schemas',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    streamId: text('stream_id').notNull(),
    version: integer('version').notNull(),
    jsonSchema: jsonb('json_schema').$type<Record<string, unknown>>().notNull(),
    ui: jsonb('ui').$type<Record<string, unknown>>().notNull().default({}),
    changelog: text('changelog').notNull().default(''),
    inferred: boolean('inferred').notNull().default(false),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('stream_schemas_stream_version').on(t.streamId, t.version)],
);

/**
 * A stream's sources: one form (form_id) or a selector (`tag:<tag>`, `project:<id>`) matched when a
 * submission arrives, so forms created or tagged later feed the stream too. mapping_status and missing
 * are re-validated whenever the stream publishes a version (stream_schema_version says which).
 */
export const streamSources = pgTable(
  'stream_sources',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    streamId: text('stream_id').notNull(),
    formId: text('form_id'),
    selector: text('selector'),
    mapping: jsonb('mapping').$type<Record<string, Record<string, unknown>>>().notNull(),
    mappingStatus: text('mapping_status').notNull(),
    missing: jsonb('missing').$type<string[]>().notNull().default([]),
    streamSchemaVersion: integer('stream_schema_version').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('stream_sources_stream').on(t.streamId, t.id),
    index('stream_sources_org').on(t.orgId),
    uniqueIndex('stream_sources_stream_form').on(t.streamId, t.formId).where(sql`form_id is not null`),
    uniqueIndex('stream_sources_stream_selector').on(t.streamId, t.selector).where(sql`selector is not null`),
  ],
);

/**
 * Anonymous sandboxes: an inert form (in the system sandbox organization until claimed) reachable
 * with a capability token. Only hashes of the token and of the creating Idempotency-Key are kept.
 */
export const sandboxes = pgTable(
  'sandboxes',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    formId: text('form_id').notNull(),
    name: text('name').notNull(),
    origin: text('origin'),
    claimEmail: text('claim_email'),
    tokenHash: text('token_hash').notNull(),
    idempotencyKeyHash: text('idempotency_key_hash').notNull(),
    requestHash: text('request_hash').notNull(),
    sourceIp: text('source_ip').notNull(),
    status: text('status').notNull().default('active'),
    expiresAt: ts('expires_at').notNull(),
    claimedAt: ts('claimed_at'),
    claimedOrgId: text('claimed_org_id'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('sandboxes_idempotency').on(t.idempotencyKeyHash),
    index('sandboxes_source').on(t.sourceIp, t.createdAt),
    index('sandboxes_expires').on(t.expiresAt),
    index('sandboxes_form').on(t.formId),
  ],
);

/** Invitations to an organization; accepted by a session of the invited address. */
export const invitations = pgTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    email: text('email').notNull(),
    role: text('role').notNull(),
    invitedByUserId: text('invited_by_user_id'),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    acceptedUserId: text('accepted_user_id'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('invitations_org').on(t.orgId, t.id),
    uniqueIndex('invitations_pending').on(t.orgId, t.email).where(sql`accepted_at is null and revoked_at is null`),
  ],
);

/** Plan grants made by platform operators: a code (kept hashed) that sets a plan when redeemed. */
export const planGrants = pgTable(
  'plan_grants',
  {
    id: text('id').primaryKey(),
    plan: text('plan').notNull(),
    note: text('note').notNull().default(''),
    codeHash: text('code_hash').notNull(),
    expiresAt: ts('expires_at'),
    planDurationDays: integer('plan_duration_days'),
    maxRedemptions: integer('max_redemptions').notNull().default(1),
    redeemedCount: integer('redeemed_count').notNull().default(0),
    createdByUserId: text('created_by_user_id'),
    createdAt: createdAt(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('plan_grants_code').on(t.codeHash)],
);

/** One row per organization that redeemed a grant (an organization redeems a grant once). */
export const planRedemptions = pgTable(
  'plan_redemptions',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id').notNull(),
    orgId: text('org_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('plan_redemptions_grant_org').on(t.grantId, t.orgId)],
);

/** Billing webhook messages already processed, by their webhook-id: a replay is ignored. */
export const billingEvents = pgTable('billing_events', {
  id: text('id').primaryKey(),
  type: text('type').notNull(),
  orgId: text('org_id'),
  receivedAt: createdAt(),
});

/**
 * Secrets the server makes for itself, generated once by whichever process needs one first, so every
 * process of a deployment agrees (e.g. `file_links`: the HMAC key of signed attachment download URLs).
 */
export const serverSecrets = pgTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
});

/** The learning filter's counts per organization (migration 0017); `version` moves with every mark. */
export const spamModels = pgTable('spam_models', {
  orgId: text('org_id').primaryKey(),
  spamDocs: integer('spam_docs').notNull().default(0),
  hamDocs: integer('ham_docs').notNull().default(0),
  version: bigint('version', { mode: 'number' }).notNull().default(0),
});

/** Per (organization, token): how many spam and not-spam marks held it. */
export const spamTokens = pgTable(
  'spam_tokens',
  {
    orgId: text('org_id').notNull(),
    token: text('token').notNull(),
    spam: integer('spam').notNull().default(0),
    ham: integer('ham').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.token] })],
);

/** The mark each submission taught ("spam" or "ham"), so a changed mark unlearns the first. */
export const spamMarks = pgTable(
  'spam_marks',
  {
    submissionId: text('submission_id').primaryKey(),
    orgId: text('org_id').notNull(),
    mark: text('mark').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('spam_marks_org').on(t.orgId)],
);

/**
 * Velocity's shared count on PostgreSQL (migration 0026; server/spam/velocity.ts): each node writes,
 * once a second, how many times it saw a key (an organization-salted hash of a text or an address)
 * that it has seen at least twice in the window; the other nodes add these rows to their own count.
 * Rows older than the window are deleted by housekeeping, and with their organization (cascade).
 */
export const spamSightings = pgTable(
  'spam_sightings',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    orgId: text('org_id').notNull(),
    key: text('key').notNull(),
    node: text('node').notNull(),
    at: ts('at').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [index('spam_sightings_key').on(t.key, t.at)],
);

/**
 * Proof-of-work solutions already used (migration 0018), by their challenge's signature: a replay
 * fails in every process. Kept until the challenge expires, then pruned by housekeeping.
 */
export const powSpent = pgTable(
  'pow_spent',
  {
    signature: text('signature').primaryKey(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('pow_spent_expires').on(t.expiresAt)],
);

/**
 * The dashboard charts' per-day counts (migration 0020): one row per (form, UTC day) with
 * submissions, written by the worker's rollup job (server/worker/daily-rollup.ts) for closed days,
 * never by intake. Test submissions are not counted; deliveries are those of the day's submissions.
 */
export const dailyCounts = pgTable(
  'daily_counts',
  {
    formId: text('form_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    orgId: text('org_id').notNull(),
    received: integer('received').notNull().default(0),
    spam: integer('spam').notNull().default(0),
    quarantined: integer('quarantined').notNull().default(0),
    deliveries: integer('deliveries').notNull().default(0),
    sent: integer('sent').notNull().default(0),
    rolledAt: ts('rolled_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.formId, t.day] }), index('daily_counts_org_day').on(t.orgId, t.day)],
);

/** A rollup's watermark: every day before `rolled_until` has been rolled at least once. */
export const rollupState = pgTable('rollup_state', {
  name: text('name').primaryKey(),
  rolledUntil: date('rolled_until', { mode: 'string' }).notNull(),
  ranAt: ts('ran_at'),
});

/** OAuth clients that registered themselves (RFC 7591); public clients, so no secret. */
export const oauthClients = pgTable('oauth_clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  redirectUris: text('redirect_uris').array().notNull(),
  createdAt: createdAt(),
});

/** One approval on the consent page: a person in one organization, a client, a scope, a resource. */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    userId: text('user_id').notNull(),
    clientId: text('client_id').notNull(),
    scopes: text('scopes').array().notNull(),
    resource: text('resource').notNull(),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
    createdAt: createdAt(),
  },
  (t) => [index('oauth_grants_org').on(t.orgId, t.id)],
);

/** Authorization codes (hashed), one use each. */
export const oauthCodes = pgTable('oauth_codes', {
  hash: text('hash').primaryKey(),
  clientId: text('client_id').notNull(),
  orgId: text('org_id').notNull(),
  userId: text('user_id').notNull(),
  scopes: text('scopes').array().notNull(),
  resource: text('resource').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  grantId: text('grant_id'),
  usedAt: ts('used_at'),
  expiresAt: ts('expires_at').notNull(),
});

/** Access and refresh tokens of a grant (hashed); kind 'access' or 'refresh'. */
export const oauthTokens = pgTable(
  'oauth_tokens',
  {
    hash: text('hash').primaryKey(),
    grantId: text('grant_id').notNull(),
    kind: text('kind').notNull(),
    usedAt: ts('used_at'),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('oauth_tokens_grant').on(t.grantId)],
);
