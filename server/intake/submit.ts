import { and, count, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Db } from '../db/client.js';
import { attachments, deliveries, forms, organizations, submissions } from '../db/schema.js';
import { appendEvent } from '../events.js';
import type { Deps } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { recordDrift } from '../schemas/drift.js';
import { limitsOf } from '../services/orgs.js';
import { quotaUsed } from '../services/quota.js';
import { admitSandboxSubmission } from '../services/sandboxes.js';
import { type IntakeSchemaResult, intakeSchemaCheck } from '../services/schemas.js';
import {
  type Control,
  canonicalOrigin,
  originAllowed,
  spamScore,
  splitControl,
  type Verdict,
  verifyTurnstile,
} from './checks.js';
import { type Parsed, parseSubmission } from './parse.js';
import { planDeliveries } from './plan.js';

export type FormRow = typeof forms.$inferSelect;
type OrgRow = typeof organizations.$inferSelect;
type SubmissionRow = typeof submissions.$inferSelect;

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

/** The form (and its organization) a submission is for; 404 for an unknown id. */
export async function resolveForm(db: Db, formId: string): Promise<{ form: FormRow; org: OrgRow }> {
  const [row] = await db
    .select({ form: forms, org: organizations })
    .from(forms)
    .innerJoin(organizations, eq(organizations.id, forms.orgId))
    .where(eq(forms.id, formId))
    .limit(1);
  if (!row) {
    throw new ApiError('not_found', `Form ${formId} does not exist.`, {
      hint: 'Check the form id in the submit URL; GET /v1/forms lists your forms and their submit_url.',
    });
  }
  return row;
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
async function overQuota(deps: Deps, org: OrgRow, now: Date): Promise<boolean> {
  const max = limitsOf(deps.config, org, now).submissions_per_month;
  if (max === null) return false;
  return (await quotaUsed(deps.database.db, org.id, now)) >= max;
}

function validRateLimit(v: unknown): RateLimit | null {
  const r = v as RateLimit | null | undefined;
  return r && Number.isInteger(r.max) && Number.isInteger(r.window_s) && r.max > 0 && r.window_s > 0 ? r : null;
}

/**
 * POST /s/{formId}, in the spec's order: resolve form → parse → strip control fields → cheap
 * checks that store with a status (honeypot, origin, rate limit, challenge) → schema check (enforce
 * and managed quarantine a violation) → quota → one transaction that inserts the submission, plans
 * its deliveries and appends the event.
 */
export async function intake(
  deps: Deps,
  input: IntakeRequest,
  resolved: { form: FormRow; org: OrgRow },
): Promise<Outcome> {
  const { form, org } = resolved;
  const now = deps.now();
  const limits = limitsOf(deps.config, org, now);
  const parsed = await parseSubmission(input.req, {
    orgId: org.id,
    storage: deps.storage,
    maxFileBytes: form.sandbox ? null : limits.attachment_max_bytes,
    maxFiles: limits.attachments_per_submission,
  });
  try {
    return await decideAndStore(deps, input, form, org, parsed, now);
  } catch (err) {
    await Promise.all(parsed.files.map((f) => deps.storage.remove(f.storageKey).catch(() => {})));
    throw err;
  }
}

async function decideAndStore(deps: Deps, input: IntakeRequest, form: FormRow, org: OrgRow, parsed: Parsed, now: Date) {
  const db = deps.database.db;
  const settings = form.settings;
  const honeypot = typeof settings.honeypot_field === 'string' ? settings.honeypot_field : '_gotcha';
  const { data, control } = splitControl(parsed.fields, honeypot);
  // A sandbox form keeps only inert test submissions: no deliveries, events or outbound traffic.
  if (form.sandbox) control.test = true;
  const idemKey = (input.header('idempotency-key') ?? control.idempotency)?.slice(0, 255) || null;

  if (idemKey) {
    const existing = await findByIdempotency(db, form.id, idemKey);
    if (existing) return replay(deps, form, existing, control, parsed);
  }

  const originHeader = input.header('origin');
  const origin = canonicalOrigin(originHeader) ?? canonicalOrigin(input.header('referer'));
  const userAgent = input.header('user-agent');
  const rateLimit = validRateLimit(settings.rate_limit);

  let verdict: Verdict = { status: 'received', reason: null };
  let retryAfter: number | undefined;
  if (control.honeypotFilled) verdict = { status: 'spam', reason: null };
  else if (!originAllowed(settings.allowed_origins, origin))
    verdict = { status: 'quarantined', reason: 'origin_rejected' };
  if (verdict.status === 'received' && rateLimit) {
    const rl = await recentFromIp(db, form.id, input.ip, rateLimit, now);
    if (rl.over) {
      verdict = { status: 'quarantined', reason: 'rate_limited' };
      retryAfter = rl.retryAfter;
    }
  }
  const challenge = settings.challenge as { provider?: string; secret?: string } | null | undefined;
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
    schema = await intakeSchemaCheck(db, form, data);
    if (schema?.violation) ({ verdict, issues } = schema.violation);
  }
  if (verdict.status === 'received' && !control.test && (await overQuota(deps, org, now))) {
    verdict = { status: 'quarantined', reason: 'over_quota' };
  }

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

  const id = newId('submission');
  const paused = form.status === 'paused';

  const result = await db.transaction(async (tx) => {
    if (form.sandbox) await admitSandboxSubmission(tx, form.id, now);
    let v = verdict;
    let wait = retryAfter;
    if (v.status === 'received' && rateLimit) {
      // Exact under concurrency and across processes: one lock per (form, IP), then count again.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${form.id}|${input.ip}`}, 0))`);
      const rl = await recentFromIp(tx, form.id, input.ip, rateLimit, now);
      if (rl.over) {
        v = { status: 'quarantined', reason: 'rate_limited' };
        wait = rl.retryAfter;
      }
    }
    const inserted = await tx
      .insert(submissions)
      .values({
        id,
        orgId: org.id,
        formId: form.id,
        status: v.status,
        quarantineReason: v.reason,
        test: control.test,
        data,
        formSchemaVersion: form.currentSchemaVersion,
        issues,
        spam: spamScore(data, control.honeypotFilled, userAgent),
        meta,
        clientIp: input.ip,
        idempotencyKey: idemKey,
        subjectHint: control.subject ?? null,
        receivedAt: now,
      })
      .onConflictDoNothing({ target: [submissions.formId, submissions.idempotencyKey] })
      .returning();
    if (!inserted.length) return null; // a concurrent repeat with the same idempotency key won
    const submission = inserted[0];
    if (parsed.files.length) {
      await tx.insert(attachments).values(
        parsed.files.map((f) => ({
          id: f.id,
          orgId: org.id,
          formId: form.id,
          submissionId: id,
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
        submissionId: id,
        schemaVersion: schema.version,
        findings: schema.drift,
        now,
      });
      dispatched += drift.dispatched;
      if (drift.refs.length) {
        await tx.update(submissions).set({ drift: drift.refs }).where(eq(submissions.id, id));
        submission.drift = drift.refs;
      }
    }
    const planned =
      paused || form.sandbox
        ? []
        : await planDeliveries(tx, {
            orgId: org.id,
            form,
            submission: {
              id,
              status: v.status,
              quarantineReason: v.reason,
              test: control.test,
              data,
              meta,
              receivedAt: now,
            },
            now,
          });
    const eventType = form.sandbox
      ? null
      : v.status === 'received'
        ? 'submission.received'
        : v.status === 'quarantined'
          ? 'submission.quarantined'
          : null;
    if (eventType) {
      const appended = await appendEvent(tx, {
        orgId: org.id,
        type: eventType,
        subject: { submission_id: id, form_id: form.id },
        data: {
          status: v.status,
          quarantine_reason: v.reason,
          test: control.test,
          deliveries: planned.map((d) => d.id),
        },
        now,
      });
      dispatched += appended.dispatched;
    }
    return { submission, planned, retryAfter: wait, dispatched };
  });

  if (!result) {
    const existing = await findByIdempotency(db, form.id, idemKey as string);
    return replay(deps, form, existing as SubmissionRow, control, parsed);
  }
  if (result.dispatched || result.planned.some((d) => d.status === 'pending')) deps.wake();
  return {
    form,
    submission: result.submission,
    idempotent: false,
    deliveryIds: result.planned.map((d) => d.id),
    fileIds: parsed.files.map((f) => f.id),
    control,
    encoding: parsed.encoding,
    retryAfter: result.retryAfter,
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
