import { and, count, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import { attachments, deliveries, type forms, organizations, submissions } from '../db/schema.js';
import { appendEvent } from '../events.js';
import type { Deps } from '../http/context.js';
import { limitKey } from '../http/ip.js';
import { recordDrift } from '../schemas/drift.js';
import { limitsOf } from '../services/orgs.js';
import { quotaUsed } from '../services/quota.js';
import { admitSandboxSubmission } from '../services/sandboxes.js';
import { checkAgainstSchema, type IntakeSchemaResult } from '../services/schemas.js';
import { formNotFound, type IntakeEntry, loadEntry, StaleEntry } from './cache.js';
import {
  type Control,
  canonicalOrigin,
  originAllowed,
  spamScore,
  splitControl,
  type Verdict,
  verifyTurnstile,
} from './checks.js';
import { coerceFormData } from './coerce.js';
import { type Parsed, parseSubmission } from './parse.js';
import { planFromRoutes, readFormRoutes } from './plan.js';
import { submissionEvent, writeInOneStatement } from './write.js';

export type FormRow = typeof forms.$inferSelect;
type OrgRow = typeof organizations.$inferSelect;
type SubmissionRow = Omit<typeof submissions.$inferSelect, 'searchText'>;

export interface IntakeRequest {
  req: Request;
  ip: string;
  header(name: string): string | undefined;
}

export interface Outcome {
  form: FormRow;
  submission: SubmissionRow;
  idempotent: boolean;
  deliveryIds: string[];
  fileIds: string[];
  control: Control;
  encoding: Parsed['encoding'];
  /** seconds until the rate-limit window lets the next one in */
  retryAfter?: number;
}

interface RateLimit {
  max: number;
  window_s: number;
}

/** Accepted submissions of one client IP to one form in the window (rate-limited ones do not count). */
async function recentFromIp(db: Db, formId: string, ip: string, rl: RateLimit, now: Date) {
  const since = new Date(now.getTime() - rl.window_s * 1000);
  const [row] = await db
    .select({ n: count(), oldest: sql<string | Date | null>`min(${submissions.receivedAt})` })
    .from(submissions)
    .where(
      and(
        eq(submissions.formId, formId),
        eq(submissions.clientIp, ip),
        gt(submissions.receivedAt, since),
        or(isNull(submissions.quarantineReason), ne(submissions.quarantineReason, 'rate_limited')),
      ),
    );
  const n = Number(row.n);
  const oldest = row.oldest ? new Date(row.oldest).getTime() : now.getTime();
  const retryAfter = Math.max(1, Math.ceil((oldest + rl.window_s * 1000 - now.getTime()) / 1000));
  return { over: n >= rl.max, retryAfter };
}

/** Whether this month's quota is spent (counted as quotaUsed says: over-quota ones count only once released). */
async function overQuota(db: Db, deps: Deps, org: OrgRow, now: Date): Promise<boolean> {
  const max = limitsOf(deps.config, org, now).submissions_per_month;
  if (max === null) return false;
  return (await quotaUsed(db, org.id, now)) >= max;
}

function validRateLimit(v: unknown): RateLimit | null {
  const r = v as RateLimit | null | undefined;
  return r && Number.isInteger(r.max) && Number.isInteger(r.window_s) && r.max > 0 && r.window_s > 0 ? r : null;
}

/**
 * POST /s/{formId}, in the spec's order: parse → strip control fields → cheap checks that store
 * with a status (honeypot, origin, rate limit, challenge) → schema check (enforce and managed
 * quarantine a violation) → quota → store the submission, its planned deliveries and its event
 * together. The entry is the form as intake's cache has it; a one-statement write that finds it
 * stale (see cache.ts) reads it again and decides again in the transaction, which reads the routes
 * inside it when they moved meanwhile, so a change of routes or settings is never missed.
 */
export async function intake(deps: Deps, input: IntakeRequest, first: IntakeEntry): Promise<Outcome> {
  let entry = first;
  const now = deps.now();
  const limits = limitsOf(deps.config, entry.org, now);
  const parsed = await parseSubmission(input.req, {
    orgId: entry.org.id,
    storage: deps.storage,
    maxFileBytes: entry.form.sandbox ? null : limits.attachment_max_bytes,
    maxFiles: limits.attachments_per_submission,
  });
  try {
    try {
      return await decideAndStore(deps, input, entry, parsed, now);
    } catch (err) {
      if (!(err instanceof StaleEntry)) throw err;
      entry = await loadEntry(deps.database, entry.form.id);
      return await decideAndStore(deps, input, entry, parsed, now, true);
    }
  } catch (err) {
    await Promise.all(parsed.files.map((f) => deps.storage.remove(f.storageKey).catch(() => {})));
    throw err;
  }
}

function eventTypeOf(form: FormRow, status: string) {
  if (form.sandbox) return null;
  if (status === 'received') return 'submission.received' as const;
  if (status === 'quarantined') return 'submission.quarantined' as const;
  return null;
}

async function decideAndStore(
  deps: Deps,
  input: IntakeRequest,
  entry: IntakeEntry,
  parsed: Parsed,
  now: Date,
  /** after a stale entry: the transaction, which reads the routes again inside it when they moved */
  authoritative = false,
): Promise<Outcome> {
  const { form, org } = entry;
  const db = deps.database.db;
  const limits = limitsOf(deps.config, org, now);
  const settings = form.settings;
  const honeypot = typeof settings.honeypot_field === 'string' ? settings.honeypot_field : '_gotcha';
  const split = splitControl(
    parsed.fields,
    honeypot,
    parsed.files.length ? new Set(parsed.files.map((f) => f.id)) : undefined,
  );
  const { control } = split;
  // Form-encoded values are strings: typed as the current schema declares before anything reads
  // them, so validation, the stored row, its deliveries and exports all see 25, not "25".
  const data =
    parsed.encoding !== 'json' && entry.rules
      ? coerceFormData(split.data, entry.rules, entry.org.timezone)
      : split.data;
  // A sandbox form keeps only inert test submissions: no deliveries, events or outbound traffic.
  if (form.sandbox) control.test = true;
  const idemKey = (input.header('idempotency-key') ?? control.idempotency)?.slice(0, 255) || null;

  const originHeader = input.header('origin');
  const origin = canonicalOrigin(originHeader) ?? canonicalOrigin(input.header('referer'));
  const userAgent = input.header('user-agent');
  const rateLimit = validRateLimit(settings.rate_limit);
  // client_ip holds what the rate limit counts by: the IPv4 address, or an IPv6 client's /64.
  const ipKey = limitKey(input.ip);
  const challenge = settings.challenge as { provider?: string; secret?: string } | null | undefined;
  const quotaApplies = !control.test && limits.submissions_per_month !== null;

  let verdict: Verdict = { status: 'received', reason: null };
  if (control.honeypotFilled) verdict = { status: 'spam', reason: null };
  else if (!originAllowed(settings.allowed_origins, origin, canonicalOrigin(deps.config.publicBaseUrl)))
    verdict = { status: 'quarantined', reason: 'origin_rejected' };

  const meta: Record<string, unknown> = {
    ip: input.ip,
    user_agent: userAgent ?? null,
    origin: originHeader ?? null,
    referer: input.header('referer') ?? null,
    received_at: now.toISOString(),
    content_type: input.header('content-type') ?? null,
  };
  const country = input.header('cf-ipcountry') ?? input.header('x-vercel-ip-country') ?? input.header('x-country-code');
  if (country && /^[A-Za-z]{2}$/.test(country)) meta.country = country.toUpperCase();
  const row = (v: Verdict, issues: unknown[] | null): SubmissionRow => ({
    id: newId('submission'),
    orgId: org.id,
    formId: form.id,
    status: v.status,
    quarantineReason: v.reason,
    test: control.test,
    data,
    formSchemaVersion: form.currentSchemaVersion,
    issues,
    drift: null,
    spam: spamScore(data, control.honeypotFilled, userAgent),
    meta,
    clientIp: ipKey,
    idempotencyKey: idemKey,
    subjectHint: control.subject ?? null,
    receivedAt: now,
  });
  const outcome = (submission: SubmissionRow, deliveryIds: string[], retryAfter?: number): Outcome => ({
    form,
    submission,
    idempotent: false,
    deliveryIds,
    fileIds: parsed.files.map((f) => f.id),
    control,
    encoding: parsed.encoding,
    retryAfter,
  });

  // The common case in one statement: no files, no sandbox, and no check that must count or ask
  // something first (rate limit, challenge, quota) or record drift.
  const checksFirst = verdict.status === 'received' && (rateLimit !== null || challenge?.provider === 'turnstile');
  if (!parsed.files.length && !form.sandbox && !checksFirst && !authoritative) {
    const schema = verdict.status === 'received' ? checkAgainstSchema(form, entry.schema, data) : null;
    const v = schema?.violation?.verdict ?? verdict;
    if (!schema?.drift.length && !(v.status === 'received' && quotaApplies)) {
      const submission = row(v, schema?.violation?.issues ?? null);
      const planned = form.status === 'paused' ? [] : planFromRoutes(entry.routes, planInput(entry, submission));
      const written = await writeInOneStatement(
        deps.database,
        entry,
        submission,
        planned,
        eventTypeOf(form, v.status),
        deps.handoff,
      );
      if (written.result === 'stale') throw new StaleEntry();
      if (written.result === 'repeat') {
        const existing = await findByIdempotency(db, form.id, idemKey as string);
        return replay(deps, form, existing as SubmissionRow, control, parsed);
      }
      if (written.dispatched || written.pending) deps.wake();
      return outcome(
        submission,
        planned.map((d) => d.id),
      );
    }
  }

  if (idemKey) {
    const existing = await findByIdempotency(db, form.id, idemKey);
    if (existing) return replay(deps, form, existing, control, parsed);
  }
  let retryAfter: number | undefined;
  if (verdict.status === 'received' && rateLimit) {
    const rl = await recentFromIp(db, form.id, ipKey, rateLimit, now);
    if (rl.over) {
      verdict = { status: 'quarantined', reason: 'rate_limited' };
      retryAfter = rl.retryAfter;
    }
  }
  if (verdict.status === 'received' && challenge?.provider === 'turnstile') {
    const secret = challenge.secret ?? deps.config.turnstileSecretKey;
    const check = await verifyTurnstile(deps, secret, control.turnstileToken, input.ip);
    if (!check.ok) verdict = { status: 'quarantined', reason: 'turnstile_failed' };
  }
  let issues: unknown[] | null = null;
  // Only what reaches the schema step is compared: spam, rejected origins, rate-limited floods and
  // failed challenges raise no drift.
  let schema: IntakeSchemaResult | null = null;
  if (verdict.status === 'received') {
    schema = checkAgainstSchema(form, entry.schema, data);
    if (schema?.violation) ({ verdict, issues } = schema.violation);
  }
  if (verdict.status === 'received' && quotaApplies && (await overQuota(db, deps, org, now))) {
    verdict = { status: 'quarantined', reason: 'over_quota' };
  }

  const result = await db.transaction(async (tx) => {
    // The entry decided everything so far: it must still be current (cache.ts). When the quota
    // applies, the organization's row is also the quota's lock (the release of held deliveries
    // takes it too): exact under concurrency and across processes.
    const lockOrg = verdict.status === 'received' && quotaApplies;
    const genQuery = tx
      .select({ gen: organizations.configGen })
      .from(organizations)
      .where(eq(organizations.id, org.id));
    const [current] = lockOrg ? await genQuery.for('no key update') : await genQuery;
    // The configuration moved since the entry was read: decide again on a fresh read. The second
    // time (authoritative) the entry is a moment old; should another change land while its
    // challenge or count runs (an organization being set up changes often), the routes are read
    // again here, as they stand in this transaction, instead of looping.
    if (!current) throw formNotFound(form.id);
    const moved = Number(current.gen) !== entry.gen;
    if (moved && !authoritative) throw new StaleEntry();
    const formRoutes = moved ? await readFormRoutes(tx, org.id, form) : entry.routes;
    if (form.sandbox) await admitSandboxSubmission(tx, form.id, now);
    let v = verdict;
    let wait = retryAfter;
    if (v.status === 'received' && rateLimit) {
      // Exact under concurrency and across processes: one lock per (form, IP), then count again.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${form.id}|${ipKey}`}, 0))`);
      const rl = await recentFromIp(tx, form.id, ipKey, rateLimit, now);
      if (rl.over) {
        v = { status: 'quarantined', reason: 'rate_limited' };
        wait = rl.retryAfter;
      }
    }
    if (v.status === 'received' && quotaApplies && (await overQuota(tx, deps, org, now))) {
      v = { status: 'quarantined', reason: 'over_quota' };
    }
    const submission = row(v, v === verdict ? issues : null);
    const inserted = await tx
      .insert(submissions)
      .values(submission)
      .onConflictDoNothing({
        target: [submissions.formId, submissions.idempotencyKey],
        where: sql`idempotency_key is not null`,
      })
      .returning();
    if (!inserted.length) return null; // a concurrent repeat with the same idempotency key won
    const stored = inserted[0];
    if (parsed.files.length) {
      await tx.insert(attachments).values(
        parsed.files.map((f) => ({
          id: f.id,
          orgId: org.id,
          formId: form.id,
          submissionId: stored.id,
          fieldName: f.fieldName,
          filename: f.filename,
          contentType: f.contentType,
          sizeBytes: f.sizeBytes,
          sha256: f.sha256,
          storageKey: f.storageKey,
          createdAt: now,
        })),
      );
    }
    let dispatched = 0;
    if (schema?.drift.length && v.reason !== 'rate_limited') {
      const drift = await recordDrift(tx, {
        orgId: org.id,
        formId: form.id,
        submissionId: stored.id,
        schemaVersion: schema.version,
        findings: schema.drift,
        now,
      });
      dispatched += drift.dispatched;
      if (drift.refs.length) {
        await tx.update(submissions).set({ drift: drift.refs }).where(eq(submissions.id, stored.id));
        stored.drift = drift.refs;
      }
    }
    const planned =
      form.status === 'paused' || form.sandbox ? [] : planFromRoutes(formRoutes, planInput(entry, stored));
    if (planned.length) await tx.insert(deliveries).values(planned);
    const eventType = eventTypeOf(form, v.status);
    if (eventType) {
      const appended = await appendEvent(tx, submissionEvent(eventType, stored, planned));
      dispatched += appended.dispatched;
    }
    return { submission: stored, planned, retryAfter: wait, dispatched };
  });

  if (!result) {
    const existing = await findByIdempotency(db, form.id, idemKey as string);
    return replay(deps, form, existing as SubmissionRow, control, parsed);
  }
  if (result.dispatched || result.planned.some((d) => d.status === 'pending')) deps.wake();
  return outcome(
    result.submission,
    result.planned.map((d) => d.id),
    result.retryAfter,
  );
}

/** What planning needs of a submission about to be stored. */
function planInput(entry: IntakeEntry, s: SubmissionRow) {
  return {
    orgId: entry.org.id,
    form: entry.form,
    submission: {
      id: s.id,
      status: s.status,
      quarantineReason: s.quarantineReason,
      test: s.test,
      data: s.data,
      meta: s.meta,
      receivedAt: s.receivedAt,
    },
    now: s.receivedAt,
  };
}

async function findByIdempotency(db: Db, formId: string, key: string) {
  const [row] = await db
    .select()
    .from(submissions)
    .where(and(eq(submissions.formId, formId), eq(submissions.idempotencyKey, key)))
    .limit(1);
  return row;
}

/** A repeat of an idempotency key: the original submission, nothing stored again. */
async function replay(deps: Deps, form: FormRow, original: SubmissionRow, control: Control, parsed: Parsed) {
  await Promise.all(parsed.files.map((f) => deps.storage.remove(f.storageKey).catch(() => {})));
  const planned = await deps.database.db
    .select({ id: deliveries.id })
    .from(deliveries)
    .where(eq(deliveries.submissionId, original.id));
  const files = await deps.database.db
    .select({ id: attachments.id })
    .from(attachments)
    .where(eq(attachments.submissionId, original.id));
  return {
    form,
    submission: original,
    idempotent: true,
    deliveryIds: planned.map((d) => d.id),
    fileIds: files.map((f) => f.id),
    control,
    encoding: parsed.encoding,
  };
}
