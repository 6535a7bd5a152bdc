import type { IncomingMessage } from 'node:http';
import { and, count, eq, gt, isNull, ne, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import type { Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import type { FormRow, OrgRow, SubmissionRow } from '../db/rows.js';
import { attachments, deliveries, organizations, submissions } from '../db/schema.js';
import {
  type Control,
  canonicalOrigin,
  originAllowed,
  splitControl,
  type Verdict,
  verifyTurnstile,
} from '../domain/checks.js';
import { limitKey } from '../domain/limit-key.js';
import { limitsOf } from '../domain/orgs.js';
import { asksForPow, CHALLENGE_FAILED, checkPow, POW_HEADER, type PowSpend, spendThen } from '../domain/pow.js';
import { quotaUsed } from '../domain/quota.js';
import { appendEvent } from '../events.js';
import { recordDrift } from '../services/drift-findings.js';
import { admitSandboxSubmission } from '../services/sandboxes.js';
import { checkAgainstSchema, type IntakeSchemaResult } from '../services/schemas.js';
import { confirmVerdict, planSubmitterMail, sendsSubmitterMail } from '../services/submitter-mail.js';
import type { BayesModel } from '../spam/bayes.js';
import { cachedModel } from '../spam/learn.js';
import { renderAgeS, renderTokenKey } from '../spam/render-token.js';
import { counterKeysOf, NO_COUNTER_KEYS, recentVelocity, type Velocity } from '../spam/velocity.js';
import { type SpamFacts, type SpamResult, spamFacts, spamVerdict } from '../spam/verdict.js';
import { formNotFound, type IntakeEntry, loadEntry, StaleEntry } from './cache.js';
import { coerceFormData } from './coerce.js';
import { type Parsed, parseSubmission } from './parse.js';
import { type FormRoutes, planFromRoutes, readFormRoutes } from './plan.js';
import { claimUnique, type UniqueClaim, uniqueClaimOf } from './unique.js';
import { submissionEvent, writeInOneStatement } from './write.js';

export type { FormRow } from '../db/rows.js';

export interface IntakeRequest {
  req: Request;
  ip: string;
  header(name: string): string | undefined;
  /** The request id (X-Request-Id): kept in meta, so the worker's log lines of its deliveries carry it. */
  requestId?: string;
  /** The Node request under `req`, when Node's HTTP server took it: its body is read from the parser's buffer (parse.ts). */
  incoming?: IncomingMessage;
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

const RECEIVED: Verdict = { status: 'received', reason: null };
const SPAM: Verdict = { status: 'spam', reason: null };
const ORIGIN_REJECTED: Verdict = { status: 'quarantined', reason: 'origin_rejected' };
const RATE_LIMITED: Verdict = { status: 'quarantined', reason: 'rate_limited' };
const TURNSTILE_FAILED: Verdict = { status: 'quarantined', reason: 'turnstile_failed' };
const OVER_QUOTA: Verdict = { status: 'quarantined', reason: 'over_quota' };
const SPAM_SUSPECTED: Verdict = { status: 'quarantined', reason: 'spam_suspected' };
const DUPLICATE: Verdict = { status: 'quarantined', reason: 'duplicate' };

/**
 * POST /s/{formId}, in the spec's order: parse → strip control fields → cheap checks that store
 * with a status (honeypot, origin, rate limit, challenge) → schema check (enforce and managed
 * quarantine a violation) → quota → store the submission, its planned deliveries and its event
 * together. `decide` takes everything that needs no lock; `store` makes the checks that count
 * rows (rate limit, quota) once each, under the lock (checkUnderLock). The entry is the form as
 * intake's cache has it: a store that finds it stale reads it again and decides once more, this
 * time authoritatively.
 */
export async function intake(deps: Deps, input: IntakeRequest, first: IntakeEntry): Promise<Outcome> {
  const now = deps.now();
  const limits = limitsOf(deps.config, first.org, now);
  const parsed = await parseSubmission(
    input.req,
    {
      orgId: first.org.id,
      storage: deps.storage,
      maxFileBytes: first.form.sandbox ? null : limits.attachment_max_bytes,
      maxFiles: limits.attachments_per_submission,
    },
    input.incoming,
  );
  try {
    try {
      return await decideAndStore(deps, input, first, parsed, now);
    } catch (err) {
      if (!(err instanceof StaleEntry)) throw err;
      const fresh = await loadEntry(deps.database, first.form.id);
      return await decideAndStore(deps, input, fresh, parsed, now, true);
    }
  } catch (err) {
    await removeFiles(deps, parsed);
    throw err;
  }
}

/**
 * What a request and its form's entry decide without reading or locking anything: the data and
 * control fields, the cheap checks' verdict (honeypot, origin), the schema step's finding, and
 * which of the checks that count (rate limit, quota) or ask (challenge) still apply.
 */
interface Decision {
  /** the submission's id, known before it is stored (a unique claim names it) */
  id: string;
  entry: IntakeEntry;
  parsed: Parsed;
  now: Date;
  control: Control;
  data: Record<string, unknown>;
  idemKey: string | null;
  /** what the rate limit counts by, stored as client_ip: the IPv4 address, or an IPv6 client's /64 */
  ipKey: string;
  meta: Record<string, unknown>;
  userAgent: string | undefined;
  /** the honeypot's, the origin's and the spam verdict's; only a received one goes on to the other checks */
  cheap: Verdict;
  /** the spam verdict's score, reasons and signals, recorded on every submission */
  spam: SpamResult;
  rateLimit: RateLimit | null;
  /** set when the form asks for a Turnstile challenge: its own secret, if it has one */
  turnstile: { secret: string | undefined } | null;
  /** set when the form asks for proof of work: the payload sent (field `altcha` or header X-Altcha), if any */
  pow: { payload: string | undefined } | null;
  /** null when the form has no current schema or the cheap checks stopped the submission */
  schema: IntakeSchemaResult | null;
  quotaApplies: boolean;
  /** settings.unique's claim of a received, non-test submission (unique.ts); null otherwise */
  unique: UniqueClaim | null;
}

/** The data and the control fields of a request. Pure. */
function fieldsOf(entry: IntakeEntry, parsed: Parsed): { data: Record<string, unknown>; control: Control } {
  const { form, org } = entry;
  const honeypot = typeof form.settings.honeypot_field === 'string' ? form.settings.honeypot_field : '_gotcha';
  const fileIds = parsed.files.length ? new Set(parsed.files.map((f) => f.id)) : undefined;
  const split = splitControl(parsed.fields, honeypot, fileIds);
  const { control } = split;
  // Form-encoded values are strings: typed as the current schema declares before anything reads
  // them, so validation, the stored row, its deliveries and exports all see 25, not "25".
  const data =
    parsed.encoding !== 'json' && entry.rules ? coerceFormData(split.data, entry.rules, org.timezone) : split.data;
  // A sandbox form keeps only inert test submissions: no deliveries, events or outbound traffic.
  if (form.sandbox) control.test = true;
  return { data, control };
}

/** What the spam verdict reads besides the request. */
interface SpamLookups {
  model: BayesModel | null;
  velocity: { sameContent: number; sameAddress: number } | undefined;
  /** seconds since the page was shown; `bad` for a token that does not verify; null without one */
  renderAge: number | 'bad' | null;
  /** the data's texts and addresses, read once for the velocity keys and the verdict */
  facts: SpamFacts;
}

/**
 * The spam verdict's reads, together: the organization's learning filter (the process's cache, its
 * version checked every 2 s), the velocity counts (in process on PGlite, one capped query on
 * PostgreSQL; only for a submission with a long text or an address that is no test and no honeypot
 * catch) and the render-token key (kept in the process, asked for only when a token came; checking
 * the token reads nothing). `retry`: the same submission decided again on a fresh entry.
 */
function spamLookups(
  deps: Deps,
  entry: IntakeEntry,
  { data, control }: ReturnType<typeof fieldsOf>,
  now: Date,
  retry: boolean,
): SpamLookups | Promise<SpamLookups> {
  const orgId = entry.org.id;
  const facts = spamFacts(data);
  const keys = control.test || control.honeypotFilled ? NO_COUNTER_KEYS : counterKeysOf(orgId, facts);
  const modelOr = cachedModel(deps.database, orgId, Date.now());
  const velocityOr = recentVelocity(deps.database, keys, now, deps.config.spamVelocityWindowS, !retry);
  const keyOr = control.rendered === undefined ? null : renderTokenKey(deps.database);
  const lookups = (model: BayesModel | null, velocity: Velocity | undefined, key: Buffer | null): SpamLookups => ({
    model,
    velocity,
    renderAge:
      key && control.rendered !== undefined ? renderAgeS(key, entry.form.id, control.rendered, now.getTime()) : null,
    facts,
  });
  // Usually nothing here reads (the model and the counts are kept in the process, no token came):
  // then no promise is made and nothing is awaited.
  if (modelOr instanceof Promise || velocityOr instanceof Promise || keyOr) {
    return Promise.all([modelOr, velocityOr, keyOr]).then(([model, velocity, key]) => lookups(model, velocity, key));
  }
  return lookups(modelOr, velocityOr, null);
}

/** Pure: reads nothing, awaits nothing. */
function decide(
  deps: Deps,
  input: IntakeRequest,
  entry: IntakeEntry,
  parsed: Parsed,
  now: Date,
  { data, control }: ReturnType<typeof fieldsOf>,
  lookups: SpamLookups,
): Decision {
  const { form, org } = entry;
  const settings = form.settings;
  const originHeader = input.header('origin');
  const userAgent = input.header('user-agent');
  const origin = canonicalOrigin(originHeader) ?? canonicalOrigin(input.header('referer'));
  const { model, velocity, renderAge, facts } = lookups;
  const spam = spamVerdict(
    {
      data,
      facts,
      honeypotFilled: control.honeypotFilled,
      userAgent,
      ip: input.ip,
      renderAgeS: typeof renderAge === 'number' ? renderAge : null,
      badRenderToken: renderAge === 'bad',
      model,
      velocity,
    },
    entry.spam,
  );
  const cheap = control.honeypotFilled
    ? SPAM
    : // the service's own pages (the hosted form, /f/{formId}) post from its own origin
      !originAllowed(settings.allowed_origins, origin, canonicalOrigin(deps.config.publicBaseUrl))
      ? ORIGIN_REJECTED
      : spam.verdict === 'spam'
        ? SPAM
        : spam.verdict === 'quarantine'
          ? SPAM_SUSPECTED
          : RECEIVED;
  return {
    id: newId('submission'),
    entry,
    parsed,
    now,
    control,
    data,
    idemKey: (input.header('idempotency-key') ?? control.idempotency)?.slice(0, 255) || null,
    ipKey: limitKey(input.ip),
    meta: requestMeta(input, originHeader, userAgent, now),
    userAgent,
    cheap,
    spam,
    rateLimit: rateLimitOf(settings.rate_limit),
    turnstile: turnstileOf(settings.challenge),
    pow: asksForPow(settings.challenge) ? { payload: control.altcha ?? input.header(POW_HEADER) } : null,
    schema: cheap.status === 'received' ? checkAgainstSchema(form, entry.schema, data) : null,
    quotaApplies: !control.test && limitsOf(deps.config, org, now).submissions_per_month !== null,
    unique: cheap.status === 'received' && !control.test ? uniqueClaimOf(settings.unique, form.id, data, now) : null,
  };
}

function requestMeta(input: IntakeRequest, origin: string | undefined, userAgent: string | undefined, now: Date) {
  const meta: Record<string, unknown> = {
    ip: input.ip,
    user_agent: userAgent ?? null,
    origin: origin ?? null,
    referer: input.header('referer') ?? null,
    received_at: now.toISOString(),
    content_type: input.header('content-type') ?? null,
  };
  if (input.requestId) meta.request_id = input.requestId;
  const country = input.header('cf-ipcountry') ?? input.header('x-vercel-ip-country') ?? input.header('x-country-code');
  if (country && /^[A-Za-z]{2}$/.test(country)) meta.country = country.toUpperCase();
  return meta;
}

function rateLimitOf(v: unknown): RateLimit | null {
  if (!v || typeof v !== 'object' || !('max' in v) || !('window_s' in v)) return null;
  const { max, window_s } = v;
  const positive = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0;
  return positive(max) && positive(window_s) ? { max, window_s } : null;
}

function turnstileOf(v: unknown): Decision['turnstile'] {
  if (!v || typeof v !== 'object' || !('provider' in v) || v.provider !== 'turnstile') return null;
  return { secret: 'secret' in v && typeof v.secret === 'string' ? v.secret : undefined };
}

async function decideAndStore(
  deps: Deps,
  input: IntakeRequest,
  entry: IntakeEntry,
  parsed: Parsed,
  now: Date,
  authoritative = false,
): Promise<Outcome> {
  const fields = fieldsOf(entry, parsed);
  const lookups = spamLookups(deps, entry, fields, now, authoritative);
  const d = decide(deps, input, entry, parsed, now, fields, lookups instanceof Promise ? await lookups : lookups);
  if (!authoritative && storesAtOnce(d)) return storeAtOnce(deps, d);
  if (d.idemKey) {
    const existing = await findByIdempotency(deps.database.db, entry.form.id, d.idemKey);
    if (existing) return replay(deps, d, existing);
  }
  return store(deps, d, await challengeThenSchema(deps, input, d), authoritative);
}

/**
 * The common case, stored in one statement: no files, no sandbox, nothing to count or ask first
 * (rate limit, challenge, quota) and no drift to record.
 */
function storesAtOnce(d: Decision): boolean {
  if (d.parsed.files.length || d.entry.form.sandbox) return false;
  if (d.cheap.status !== 'received') return true;
  // Mail to the submitter counts its abuse limits in the transaction (only forms that turn it on).
  if (sendsSubmitterMail(d.entry.form.settings)) return false;
  // settings.unique claims in the statement; with an idempotency key too, the transaction decides
  // (a claim must never outlive a write that lost to the key).
  if (d.rateLimit || d.turnstile || d.pow || (d.unique && d.idemKey) || d.schema?.drift.length) return false;
  const verdict = d.schema?.violation?.verdict ?? d.cheap;
  return !(verdict.status === 'received' && d.quotaApplies);
}

async function storeAtOnce(deps: Deps, d: Decision): Promise<Outcome> {
  const { entry } = d;
  const violation = d.schema?.violation;
  const verdict = violation?.verdict ?? d.cheap;
  const submission = submissionRow(d, verdict, violation?.issues ?? null);
  const planned = entry.form.status === 'paused' ? [] : planFromRoutes(entry.routes, planInput(entry, submission));
  const eventType = eventTypeOf(entry.form, verdict.status);
  const unique = verdict.status === 'received' ? d.unique : null;
  const written = await writeInOneStatement(deps.database, entry, submission, planned, eventType, deps.handoff, unique);
  if (written.result === 'stale') throw new StaleEntry();
  // Another submission holds these values: stored as a duplicate through the transaction (unique.ts).
  if (written.result === 'claimed')
    return store(deps, d, { verdict, issues: violation?.issues ?? null, schema: d.schema }, false);
  if (written.result === 'repeat') return replayRepeat(deps, d);
  if (written.dispatched || written.pending) deps.wake();
  return storedOutcome(
    d,
    submission,
    planned.map((p) => p.id),
  );
}

/** A verdict with what the schema step found; `schema` is set only when the submission reached that step. */
interface Checked {
  verdict: Verdict;
  issues: unknown[] | null;
  schema: IntakeSchemaResult | null;
  /** a verified proof-of-work solution, spent in the submission's transaction */
  spend?: PowSpend;
}

/**
 * The checks that need no lock but an await: the challenge (the one outside call), then the schema
 * step's verdict. A failed challenge skips the schema step: it raises no drift. The rate limit is
 * counted later, under its lock, and wins over both (a flood reads rate_limited whatever its token).
 */
async function challengeThenSchema(deps: Deps, input: IntakeRequest, d: Decision): Promise<Checked> {
  if (d.cheap.status !== 'received') return { verdict: d.cheap, issues: null, schema: null };
  if (d.turnstile) {
    const secret = d.turnstile.secret ?? deps.config.turnstileSecretKey;
    const check = await verifyTurnstile(deps, secret, d.control.turnstileToken, input.ip);
    if (!check.ok) return { verdict: TURNSTILE_FAILED, issues: null, schema: null };
  }
  const pow = d.pow ? await checkPow(deps.database, d.entry.form.id, d.pow.payload) : null;
  if (pow && !pow.ok) return { verdict: CHALLENGE_FAILED, issues: null, schema: null };
  const violation = d.schema?.violation;
  const spend = pow?.ok ? pow.spend : undefined;
  return { verdict: violation?.verdict ?? d.cheap, issues: violation?.issues ?? null, schema: d.schema, spend };
}

/** Stores a checked submission in one transaction, after the check under the lock. */
async function store(deps: Deps, d: Decision, checked: Checked, authoritative: boolean): Promise<Outcome> {
  const result = await deps.database.db.transaction(async (tx) => {
    const locked = await spendThen(tx, checked.spend, await checkUnderLock(tx, deps, d, checked, authoritative));
    const submission = submissionRow(
      d,
      confirmVerdict(d.entry.form, locked.verdict, d.control.test),
      locked.issues,
      locked.duplicateOf,
    );
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
    await insertAttachments(tx, d, stored.id);
    // Only what reached the schema step raises drift; a rate-limited flood or a replayed solution does not.
    const drift =
      locked.verdict.reason === 'rate_limited' || locked.verdict.reason === 'challenge_failed' ? null : checked.schema;
    const fromDrift = drift?.drift.length ? await storeDrift(tx, d, stored, drift) : 0;
    const { form } = d.entry;
    const planned =
      form.status === 'paused' || form.sandbox
        ? []
        : [...planFromRoutes(locked.routes, planInput(d.entry, stored)), ...(await submitterMail(tx, deps, d, stored))];
    if (planned.length) await tx.insert(deliveries).values(planned);
    const eventType = eventTypeOf(form, stored.status);
    const fromEvent = eventType ? (await appendEvent(tx, submissionEvent(eventType, stored, planned))).dispatched : 0;
    return { stored, planned, retryAfter: locked.retryAfter, dispatched: fromDrift + fromEvent };
  });
  if (!result) return replayRepeat(deps, d);
  if (result.dispatched || result.planned.some((p) => p.status === 'pending')) deps.wake();
  return storedOutcome(
    d,
    result.stored,
    result.planned.map((p) => p.id),
    result.retryAfter,
  );
}

interface Locked {
  routes: FormRoutes;
  verdict: Verdict;
  issues: unknown[] | null;
  /** seconds until the rate-limit window lets the next one in */
  retryAfter?: number;
  /** settings.unique: the first submission with these values, when this one repeats them */
  duplicateOf?: string;
}

/**
 * The one check under the lock, made before anything is written, in this order:
 * - the rate limit, counted once under one advisory lock per (form, IP);
 * - the entry is still current: the organization's config_gen is the one it was read at (cache.ts).
 *   When it moved, a first try throws StaleEntry to be decided again on a fresh entry; the second,
 *   authoritative try reads the routes as they stand in this transaction instead of looping (an
 *   organization being set up changes often);
 * - the sandbox's allowance;
 * - the quota, counted once under the organization's row, which the gen read locks when the quota
 *   applies (the release of held deliveries takes it too);
 * - settings.unique's claim, for a submission still received (unique.ts).
 * Both counts are exact under concurrency and across processes.
 */
async function checkUnderLock(
  tx: Db,
  deps: Deps,
  d: Decision,
  checked: Checked,
  authoritative: boolean,
): Promise<Locked> {
  const { form, org } = d.entry;
  let { verdict, issues } = checked;
  let retryAfter: number | undefined;
  if (d.cheap.status === 'received' && d.rateLimit) {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${form.id}|${d.ipKey}`}, 0))`);
    const rl = await recentFromIp(tx, form.id, d.ipKey, d.rateLimit, d.now);
    if (rl.over) {
      verdict = RATE_LIMITED;
      issues = null;
      retryAfter = rl.retryAfter;
    }
  }
  const quotaLock = verdict.status === 'received' && d.quotaApplies;
  const genQuery = tx.select({ gen: organizations.configGen }).from(organizations).where(eq(organizations.id, org.id));
  const [current] = quotaLock ? await genQuery.for('no key update') : await genQuery;
  if (!current) throw formNotFound(form.id);
  const moved = Number(current.gen) !== d.entry.gen;
  if (moved && !authoritative) throw new StaleEntry();
  const routes = moved ? await readFormRoutes(tx, org.id, form) : d.entry.routes;
  if (form.sandbox) await admitSandboxSubmission(tx, form.id, d.now);
  if (quotaLock && (await overQuota(tx, deps, org, d.now))) return { routes, verdict: OVER_QUOTA, issues: null };
  const first =
    verdict.status === 'received' && d.unique ? await claimUnique(tx, form.id, d.unique, d.id, d.now) : null;
  if (first) return { routes, verdict: DUPLICATE, issues: null, duplicateOf: first };
  return { routes, verdict, issues, retryAfter };
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

function submissionRow(d: Decision, v: Verdict, issues: unknown[] | null, duplicateOf?: string): SubmissionRow {
  const { form, org } = d.entry;
  return {
    id: d.id,
    orgId: org.id,
    formId: form.id,
    status: v.status,
    quarantineReason: v.reason,
    test: d.control.test,
    data: d.data,
    formSchemaVersion: form.currentSchemaVersion,
    issues,
    drift: null,
    spam: { score: d.spam.score, reasons: d.spam.reasons, signals: d.spam.signals },
    meta: d.meta,
    clientIp: d.ipKey,
    idempotencyKey: d.idemKey,
    subjectHint: d.control.subject ?? null,
    receivedAt: d.now,
    duplicateOf: duplicateOf ?? null,
    spamFingerprint: null,
    spamAddress: null,
  };
}

async function insertAttachments(tx: Db, d: Decision, submissionId: string) {
  if (!d.parsed.files.length) return;
  await tx.insert(attachments).values(
    d.parsed.files.map((f) => ({
      id: f.id,
      orgId: d.entry.org.id,
      formId: d.entry.form.id,
      submissionId,
      fieldName: f.fieldName,
      filename: f.filename,
      contentType: f.contentType,
      sizeBytes: f.sizeBytes,
      sha256: f.sha256,
      storageKey: f.storageKey,
      createdAt: d.now,
    })),
  );
}

/** Records the schema step's drift findings against the stored submission; answers what was fanned out. */
async function storeDrift(tx: Db, d: Decision, stored: SubmissionRow, schema: IntakeSchemaResult): Promise<number> {
  const drift = await recordDrift(tx, {
    orgId: d.entry.org.id,
    formId: d.entry.form.id,
    submissionId: stored.id,
    schemaVersion: schema.version,
    findings: schema.drift,
    now: d.now,
  });
  if (drift.refs.length) {
    await tx.update(submissions).set({ drift: drift.refs }).where(eq(submissions.id, stored.id));
    stored.drift = drift.refs;
  }
  return drift.dispatched;
}

function eventTypeOf(form: FormRow, status: string) {
  if (form.sandbox) return null;
  if (status === 'received') return 'submission.received' as const;
  if (status === 'quarantined') return 'submission.quarantined' as const;
  return null;
}

/** The autoresponse or confirmation mail of a stored submission (services/submitter-mail.ts). */
function submitterMail(tx: Db, deps: Deps, d: Decision, stored: SubmissionRow) {
  if (!sendsSubmitterMail(d.entry.form.settings)) return [];
  const { form, org } = d.entry;
  const input = { config: deps.config, orgId: org.id, form, block: d.entry.spam.block, now: d.now };
  return planSubmitterMail(tx, input, stored);
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

function storedOutcome(d: Decision, submission: SubmissionRow, deliveryIds: string[], retryAfter?: number): Outcome {
  return {
    form: d.entry.form,
    submission,
    idempotent: false,
    deliveryIds,
    fileIds: d.parsed.files.map((f) => f.id),
    control: d.control,
    encoding: d.parsed.encoding,
    retryAfter,
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

/** After a write that lost to the same idempotency key: the answer is the submission that won. */
async function replayRepeat(deps: Deps, d: Decision): Promise<Outcome> {
  const won = d.idemKey === null ? undefined : await findByIdempotency(deps.database.db, d.entry.form.id, d.idemKey);
  if (!won) throw new Error(`a write of form ${d.entry.form.id} lost to an idempotency key no submission holds`);
  return replay(deps, d, won);
}

/** A repeat of an idempotency key: the original submission, nothing stored again. */
async function replay(deps: Deps, d: Decision, original: SubmissionRow): Promise<Outcome> {
  await removeFiles(deps, d.parsed);
  const planned = await deps.database.db
    .select({ id: deliveries.id })
    .from(deliveries)
    .where(eq(deliveries.submissionId, original.id));
  const files = await deps.database.db
    .select({ id: attachments.id })
    .from(attachments)
    .where(eq(attachments.submissionId, original.id));
  return {
    form: d.entry.form,
    submission: original,
    idempotent: true,
    deliveryIds: planned.map((p) => p.id),
    fileIds: files.map((f) => f.id),
    control: d.control,
    encoding: d.parsed.encoding,
  };
}

async function removeFiles(deps: Deps, parsed: Parsed) {
  await Promise.all(parsed.files.map((f) => deps.storage.remove(f.storageKey).catch(() => {})));
}
