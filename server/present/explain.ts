import type { z } from '../../shared/contracts/common.js';
import type {
  ExplainDelivery,
  ExplainRoute,
  IntakeCheck,
  SubmissionExplanation,
} from '../../shared/contracts/explain.js';
import { SUBMITTER_TARGET } from '../../shared/contracts/submitter.js';
import type { DeliveryRow, SubmissionRow } from '../db/rows.js';
import { scrubSecrets } from './deliveries.js';

type Check = z.output<typeof IntakeCheck>;
type RouteOut = z.output<typeof ExplainRoute>;
type DeliveryOut = z.output<typeof ExplainDelivery>;
export type ExplanationOut = z.output<typeof SubmissionExplanation>;

/** A destination as explain reads it (its state now: what keeps a delivery waiting is today's switch). */
export interface ExplainDestination {
  id: string;
  name: string;
  type: string;
  enabled: boolean;
  disabledReason: string | null;
  consecutiveFailures: number;
  failingSince: Date | null;
  /** when it was switched off (its latest destination.disabled event), if the log has it */
  disabledAt: Date | null;
  /** its deliveries waiting unattempted (pending, not due): what enabling or approving it sends */
  waiting: number;
  /** settings.approve_destinations: made or re-pointed by a key, it waits for an owner or admin */
  approvalPending: boolean;
  /** the name of the key that asked */
  approvalAskedBy: string | null;
  approvalRequestedAt: Date | null;
}

export interface AttemptRowIn {
  deliveryId: string;
  n: number;
  startedAt: Date;
  latencyMs: number;
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  outcome: string;
}

/** A route of the form or of a stream it feeds, as it is now, for routes that planned no delivery row. */
export interface CurrentRoute {
  id: string;
  streamId: string | null;
  destinationId: string;
  enabled: boolean;
  digest: boolean;
  createdAt: Date;
}

export interface ExplainInput {
  submission: SubmissionRow;
  form: { status: string; sandbox: boolean };
  /** the mark a person gave it (spam_marks), if any */
  mark: string | null;
  deliveries: DeliveryRow[];
  /** every route the deliveries name, and the form's current routes (direct and through streams) */
  routes: Map<string, CurrentRoute>;
  destinations: Map<string, ExplainDestination>;
  attempts: AttemptRowIn[];
}

const hhmm = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

// ---------------------------------------------------------------- intake checks

/** What intake stored, as one verdict per check, in the order intake runs them (server/intake/submit.ts). */
export function intakeChecks(input: ExplainInput): Check[] {
  const s = input.submission;
  const q = s.quarantineReason;
  const reasons = s.spam.reasons ?? [];
  const honeypot = reasons.includes('honeypot_filled');
  const originFailed = q === 'origin_rejected';
  const spamStopped = !honeypot && !originFailed && (s.status === 'spam' || q === 'spam_suspected') && !input.mark;
  const stoppedEarly = honeypot || originFailed || spamStopped;
  const origin = typeof s.meta.origin === 'string' ? s.meta.origin : null;
  const checks: Check[] = [];
  checks.push({
    check: 'origin',
    verdict: honeypot ? 'not_checked' : originFailed ? 'failed' : 'passed',
    reason: honeypot
      ? 'Not checked: the honeypot field was filled, so the submission was stored as spam first.'
      : originFailed
        ? `Quarantined: the origin ${origin ?? '(none sent)'} is not in the form's allowed_origins.`
        : `Allowed (origin ${origin ?? 'not sent'}).`,
  });
  checks.push(spamCheck(input, honeypot, originFailed));
  const after = (check: Check['check'], failed: boolean, failedText: string, passedText: string): Check => ({
    check,
    verdict: failed ? 'failed' : stoppedEarly ? 'not_checked' : 'passed',
    reason: failed ? failedText : stoppedEarly ? 'Not checked: an earlier check stopped the submission.' : passedText,
  });
  checks.push(
    after(
      'rate_limit',
      q === 'rate_limited',
      "Quarantined: this client sent more than the form's rate_limit allows in its window.",
      'Not rate limited.',
    ),
  );
  checks.push(
    after(
      'challenge',
      q === 'turnstile_failed' || q === 'challenge_failed',
      q === 'turnstile_failed'
        ? 'Quarantined: the Turnstile challenge did not verify.'
        : 'Quarantined: the proof-of-work solution was missing, wrong, expired or replayed.',
      'No failed challenge recorded (passed, or the form asks for none).',
    ),
  );
  checks.push(schemaCheck(s, stoppedEarly || q === 'rate_limited' || q === 'challenge_failed'));
  checks.push(
    after(
      'duplicate',
      q === 'duplicate',
      `Quarantined: settings.unique found the same values already received${s.duplicateOf ? ` in ${s.duplicateOf}` : ''}.`,
      'Not a duplicate (or the form has no settings.unique).',
    ),
  );
  checks.push(
    s.test
      ? { check: 'quota', verdict: 'not_checked', reason: 'A test submission does not count toward the quota.' }
      : after(
          'quota',
          q === 'over_quota',
          'Held: it came in over the monthly submission quota; its deliveries wait for the plan to allow them.',
          'Within the monthly quota.',
        ),
  );
  checks.push(confirmationCheck(s));
  checks.push(pausedCheck(input));
  return checks.map((c) => (c.check === 'duplicate' ? { ...c, duplicate_of: s.duplicateOf } : c));
}

function spamCheck(input: ExplainInput, honeypot: boolean, originFailed: boolean): Check {
  const s = input.submission;
  const spam = { score: s.spam.score, reasons: s.spam.reasons ?? [], signals: s.spam.signals ?? [] };
  const listed = spam.reasons.length ? ` (${spam.reasons.join(', ')})` : '';
  const score = `score ${Math.round(spam.score * 100) / 100}${listed}`;
  const marked =
    input.mark === 'spam'
      ? ' A person later marked it as spam.'
      : input.mark === 'ham'
        ? ' A person later marked it as not spam.'
        : '';
  if (honeypot)
    return { check: 'spam', verdict: 'failed', reason: `Spam: the honeypot field was filled.${marked}`, spam };
  if (originFailed)
    return { check: 'spam', verdict: 'not_checked', reason: `Scored but not applied: ${score}.${marked}`, spam };
  if (s.quarantineReason === 'spam_suspected')
    return { check: 'spam', verdict: 'failed', reason: `Quarantined as suspected spam: ${score}.${marked}`, spam };
  if (s.status === 'spam' && !input.mark)
    return { check: 'spam', verdict: 'failed', reason: `Stored as spam: ${score}.`, spam };
  return {
    check: 'spam',
    verdict: spam.reasons.length ? 'flagged' : 'passed',
    reason: `${spam.reasons.length ? 'Let through with signals' : 'No spam signal'}: ${score}.${marked}`,
    spam,
  };
}

function schemaCheck(s: SubmissionRow, notReached: boolean): Check {
  const issues = Array.isArray(s.issues) ? s.issues : [];
  const paths = issues.map((i) =>
    i && typeof i === 'object' && 'path' in i && typeof i.path === 'string' ? i.path || '/' : '/',
  );
  const base = { check: 'schema' as const, schema_version: s.formSchemaVersion, violated_paths: paths };
  const at = paths.length ? ` at ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}` : '';
  if (s.quarantineReason === 'schema_violation')
    return {
      ...base,
      verdict: 'failed',
      reason: `Quarantined: the data violates schema v${s.formSchemaVersion}${at}.`,
    };
  if (paths.length)
    return { ...base, verdict: 'flagged', reason: `Stored with issues against schema v${s.formSchemaVersion}${at}.` };
  if (notReached) return { ...base, verdict: 'not_checked', reason: 'Not checked: an earlier check stopped it.' };
  if (s.formSchemaVersion === null)
    return { ...base, verdict: 'not_checked', reason: 'The form had no schema when it came in.' };
  return { ...base, verdict: 'passed', reason: `Valid against schema v${s.formSchemaVersion}.` };
}

function confirmationCheck(s: SubmissionRow): Check {
  if (s.quarantineReason === 'pending_confirmation')
    return {
      check: 'confirmation',
      verdict: 'waiting',
      reason: 'Waiting for the submitter to confirm by mail (double opt-in); its deliveries are held until then.',
    };
  if (s.confirmation)
    return {
      check: 'confirmation',
      verdict: 'passed',
      reason: `Confirmed by the submitter at ${s.confirmation.confirmed_at}.`,
    };
  return { check: 'confirmation', verdict: 'not_checked', reason: 'No double opt-in confirmation asked.' };
}

function pausedCheck(input: ExplainInput): Check {
  if (input.deliveries.some((d) => d.destinationId !== SUBMITTER_TARGET))
    return { check: 'paused', verdict: 'passed', reason: 'The form was active: deliveries were planned.' };
  if (input.form.status === 'paused')
    return {
      check: 'paused',
      verdict: 'unknown',
      reason:
        'Not recorded at intake. The form is paused now, and a paused form stores submissions but plans no deliveries.',
    };
  return { check: 'paused', verdict: 'unknown', reason: 'Not recorded at intake; the form is active now.' };
}

// ---------------------------------------------------------------- deliveries

const failures = (d: ExplainDestination) =>
  d.failingSince && d.disabledAt
    ? ` after ${span(d.disabledAt.getTime() - d.failingSince.getTime())} of failures`
    : d.consecutiveFailures
      ? ` after ${d.consecutiveFailures} failures in a row`
      : '';

function span(ms: number) {
  const min = Math.max(1, Math.round(ms / 60000));
  if (min < 120) return `${min} minute${min === 1 ? '' : 's'}`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} hours`;
  return `${Math.round(h / 24)} days`;
}

/** "the destination waits for an owner or admin to approve it (asked by key "ci-agent" at 12:03)". */
export function approvalText(d: ExplainDestination) {
  const who = d.approvalAskedBy ? ` by key ${JSON.stringify(d.approvalAskedBy)}` : '';
  const at = d.approvalRequestedAt ? ` at ${hhmm(d.approvalRequestedAt)}` : '';
  return `the destination waits for an owner or admin to approve it (asked${who}${at})`;
}

/** "the destination has been disabled since 12:03 after 5 days of failures" (or by hand). */
export function disabledText(d: ExplainDestination) {
  const since = d.disabledAt ? ` since ${hhmm(d.disabledAt)}` : '';
  const why = d.disabledReason === 'disabled by hand' ? ' (by hand)' : failures(d);
  return `the destination has been disabled${since}${why}`;
}

function destinationLabel(d: DeliveryRow, dest: ExplainDestination | undefined) {
  if (d.destinationId === SUBMITTER_TARGET) return `the ${d.routeId} mail to the submitter`;
  return dest ? `${dest.type} ${JSON.stringify(dest.name)}` : `deleted destination ${d.destinationId}`;
}

const attemptText = (a: AttemptRowIn | undefined, d: DeliveryRow) => {
  const code = a?.statusCode ?? (d.lastResponse?.status_code as number | null | undefined) ?? null;
  const err = a?.error ?? d.lastError;
  return code !== null ? `HTTP ${code}${err ? `: ${scrubSecrets(err)}` : ''}` : err ? scrubSecrets(err) : 'no answer';
};

/** Why one delivery is where it is, from its stored status, skip reason, attempts and its destination's switch. */
function deliveryState(
  d: DeliveryRow,
  dest: ExplainDestination | undefined,
  last: AttemptRowIn | undefined,
): Pick<DeliveryOut, 'state' | 'why'> {
  switch (d.status) {
    case 'sent':
      return { state: 'sent', why: `Sent${d.sentAt ? ` at ${hhmm(d.sentAt)}` : ''} after ${d.attempts} attempt(s).` };
    case 'skipped':
      return { state: 'skipped', why: skipText(d.skipReason) };
    case 'held':
      return { state: 'held', why: heldText(d) };
    case 'dead': {
      const gaveUp = d.lastError?.includes('(gave up after') || d.attempts >= d.maxAttempts;
      return gaveUp
        ? { state: 'gave_up', why: `Gave up after ${d.attempts} attempts; the last: ${attemptText(last, d)}.` }
        : { state: 'refused', why: `Stopped at once: ${attemptText(last, d)} (retrying cannot help).` };
    }
    case 'failed':
      return {
        state: 'retrying',
        why: `Attempt ${d.attempts} of ${d.maxAttempts} failed (${attemptText(last, d)}); next attempt ${d.nextAttemptAt ? `at ${hhmm(d.nextAttemptAt)}` : 'when its destination is enabled'}.`,
      };
    default:
      if (d.status === 'pending' && d.nextAttemptAt === null && dest?.approvalPending)
        return { state: 'approval_pending', why: `Waiting unattempted: ${approvalText(dest)}.` };
      if (d.status === 'pending' && d.nextAttemptAt === null && dest && !dest.enabled)
        return { state: 'destination_disabled', why: `Waiting unattempted: ${disabledText(dest)}.` };
      return { state: 'queued', why: d.status === 'sending' ? 'Being sent now.' : 'Queued to be sent.' };
  }
}

function skipText(reason: string | null) {
  switch (reason) {
    case 'window':
      return "Skipped: it came in outside the route's time window.";
    case 'quality':
      return 'Skipped: the route excludes spam or quarantined submissions, and this one was.';
    case 'match':
      return "Skipped: the route's match condition did not match it.";
    case 'limit':
      return 'Skipped: mail to the submitter was over an abuse limit, or to a disposable or blocked domain.';
    case 'erased':
      return 'Skipped: the submission was erased (data-subject erasure) before it was sent.';
    case 'rejected':
      return 'Skipped: it waited for a destination an owner or admin rejected (the destination is deleted).';
    default:
      return 'Skipped.';
  }
}

const heldText = (d: DeliveryRow) =>
  d.destinationId === SUBMITTER_TARGET
    ? 'Held until the submitter confirms.'
    : 'Held: its submission came in over the monthly quota (or awaits double opt-in); sent once released.';

/**
 * A stored attempt row is a sent delivery's successful attempt when it is `sent`, has the row's
 * number and ended (started_at + latency_ms) within this of the row's sent_at: rounding to whole
 * milliseconds is all that separates the two.
 */
const SAME_ATTEMPT_MS = 2;

/**
 * A delivery's attempts with its successful one: the worker records a success on the delivery row
 * alone (`attempts`, `sent_at`, `last_response`; worker/attempts.ts), so a sent delivery's last
 * attempt is read from the row, unless its last stored row already is that attempt (written by a
 * release before this one, or by trimAttempts before a retry or replay; worker/attempts.ts).
 */
export function withSentAttempt(
  d: Pick<DeliveryRow, 'id' | 'status' | 'sentAt' | 'attempts' | 'lastResponse'>,
  stored: AttemptRowIn[],
): AttemptRowIn[] {
  if (d.status !== 'sent' || !d.sentAt) return stored;
  const sentAt = d.sentAt.getTime();
  const last = stored.at(-1);
  if (
    last &&
    last.outcome === 'sent' &&
    last.n === d.attempts &&
    Math.abs(last.startedAt.getTime() + last.latencyMs - sentAt) < SAME_ATTEMPT_MS
  )
    return stored;
  const latency = d.lastResponse?.latency_ms;
  const code = d.lastResponse?.status_code;
  const latencyMs = typeof latency === 'number' && Number.isFinite(latency) ? Math.max(0, Math.round(latency)) : 0;
  return [
    ...stored,
    {
      deliveryId: d.id,
      n: d.attempts,
      startedAt: new Date(sentAt - latencyMs),
      latencyMs,
      statusCode: typeof code === 'number' ? code : null,
      error: null,
      nextAttemptAt: null,
      outcome: 'sent',
    },
  ];
}

export function presentDeliveries(input: ExplainInput): DeliveryOut[] {
  const byDelivery = new Map<string, AttemptRowIn[]>();
  for (const a of input.attempts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a]);
  return input.deliveries.map((d) => {
    const dest = input.destinations.get(d.destinationId);
    const attempts = withSentAttempt(d, byDelivery.get(d.id) ?? []);
    return {
      id: d.id,
      route_id: d.routeId,
      destination_id: d.destinationId,
      destination_name: d.destinationId === SUBMITTER_TARGET ? 'submitter' : (dest?.name ?? null),
      destination_type: d.destinationId === SUBMITTER_TARGET ? SUBMITTER_TARGET : (dest?.type ?? null),
      status: d.status as DeliveryOut['status'],
      skip_reason: d.skipReason as DeliveryOut['skip_reason'],
      next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
      sent_at: d.sentAt?.toISOString() ?? null,
      ...deliveryState(d, dest, attempts.at(-1)),
      attempts: attempts.map((a) => ({
        n: a.n,
        started_at: a.startedAt.toISOString(),
        latency_ms: a.latencyMs,
        status_code: a.statusCode,
        error: a.error === null ? null : scrubSecrets(a.error),
        next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
        outcome: a.outcome as DeliveryOut['attempts'][number]['outcome'],
      })),
    };
  });
}

// ---------------------------------------------------------------- routes

/** The route verdict a delivery row stands for: its skip reason, held, waiting on a disabled destination, or planned. */
function routeReason(d: DeliveryOut): RouteOut['reason'] {
  if (d.status === 'skipped') return d.skip_reason ?? 'planned';
  if (d.state === 'held') return 'held';
  if (d.state === 'destination_disabled') return 'destination_disabled';
  if (d.state === 'approval_pending') return 'approval_pending';
  return 'planned';
}

/** Why a current route has no delivery row for this submission, from what is stored (nothing guessed). */
function notPlannedText(r: CurrentRoute, input: ExplainInput) {
  const s = input.submission;
  if (input.form.sandbox) return 'No delivery: a sandbox form delivers nothing.';
  if (r.createdAt > s.receivedAt)
    return `No delivery: the route was created at ${hhmm(r.createdAt)}, after it came in.`;
  if (r.digest) return "A digest route: it is sent in the period's digest delivery, not one per submission.";
  const now = r.enabled ? 'it is enabled now' : 'it is disabled now, and a disabled route plans nothing';
  const paused = input.form.status === 'paused' ? '; the form is paused now, and a paused form plans nothing' : '';
  return `No delivery row: the route existed, but was not applied when it came in (disabled then, or the stream did not take this form then); ${now}${paused}.`;
}

export function presentRoutes(input: ExplainInput, delivered: DeliveryOut[]): RouteOut[] {
  const destName = (id: string) => (id === SUBMITTER_TARGET ? 'submitter' : (input.destinations.get(id)?.name ?? null));
  const out: RouteOut[] = delivered.map((d) => {
    const route = input.routes.get(d.route_id);
    const submitter = d.destination_id === SUBMITTER_TARGET;
    const reason = routeReason(d);
    return {
      route_id: d.route_id,
      via: submitter ? 'submitter' : route?.streamId ? 'stream' : 'direct',
      stream_id: route?.streamId ?? null,
      destination_id: d.destination_id,
      destination_name: destName(d.destination_id),
      delivery_id: d.id,
      reason,
      detail: reason === 'planned' ? `Planned delivery ${d.id}: ${d.why}` : d.why,
    };
  });
  const seen = new Set(delivered.map((d) => d.route_id));
  for (const r of input.routes.values()) {
    if (seen.has(r.id)) continue;
    out.push({
      route_id: r.id,
      via: r.streamId ? 'stream' : 'direct',
      stream_id: r.streamId,
      destination_id: r.destinationId,
      destination_name: destName(r.destinationId),
      delivery_id: null,
      reason: 'not_planned',
      detail: notPlannedText(r, input),
    });
  }
  return out;
}

// ---------------------------------------------------------------- summary

function outcomeOf(ds: DeliveryOut[]): ExplanationOut['outcome'] {
  if (!ds.length) return 'nothing_planned';
  const states = new Set(ds.map((d) => d.state));
  if (states.has('gave_up') || states.has('refused')) return 'failed';
  if (states.has('held') || states.has('destination_disabled') || states.has('approval_pending')) return 'waiting';
  if (states.has('retrying') || states.has('queued')) return 'in_progress';
  if (states.has('sent')) return states.size === 1 ? 'sent' : 'partly_sent';
  return 'not_sent';
}

const intakeText = (s: SubmissionRow) =>
  s.status === 'quarantined'
    ? `quarantined (${s.quarantineReason})`
    : s.status === 'spam'
      ? `stored as spam (score ${Math.round(s.spam.score * 100) / 100})`
      : 'received';

/**
 * One line, the problem first (docs/explain.md lists the rules): a delivery that gave up, one
 * waiting for a disabled destination, one retrying, held, queued; then what was sent; then what
 * was skipped; then nothing planned.
 */
export function summaryOf(input: ExplainInput, ds: DeliveryOut[], routes: RouteOut[]): string {
  const s = input.submission;
  const label = (d: DeliveryOut) => {
    const row = input.deliveries.find((x) => x.id === d.id) as DeliveryRow;
    return destinationLabel(row, input.destinations.get(d.destination_id));
  };
  const first = (state: DeliveryOut['state']) => ds.find((d) => d.state === state);
  const dead = first('gave_up') ?? first('refused');
  if (dead)
    return `Not sent to ${label(dead)}: ${lower(dead.why)} POST /v1/deliveries/${dead.id}/retry sends it again once the cause is fixed.`;
  const parked = first('destination_disabled');
  if (parked) {
    const dest = input.destinations.get(parked.destination_id) as ExplainDestination;
    return `Not sent to ${label(parked)}: ${disabledText(dest)}; PATCH /v1/destinations/${dest.id} {"enabled":true} sends the ${dest.waiting} waiting.`;
  }
  const waitsForPerson = first('approval_pending');
  if (waitsForPerson) {
    const dest = input.destinations.get(waitsForPerson.destination_id) as ExplainDestination;
    return `Not sent to ${label(waitsForPerson)}: ${approvalText(dest)}; approving it in the dashboard (/app/approvals) sends the ${dest.waiting} waiting.`;
  }
  const retrying = first('retrying');
  if (retrying) return `Not sent to ${label(retrying)} yet: ${lower(retrying.why)}`;
  const held = first('held');
  if (held) return `${cap(intakeText(s))}; not sent to ${label(held)} yet: ${lower(held.why)}`;
  const queued = first('queued');
  if (queued) return `${cap(intakeText(s))}; queued for ${label(queued)}.`;
  const sent = ds.filter((d) => d.state === 'sent');
  const skipped = ds.filter((d) => d.state === 'skipped');
  const skippedText = skipped.length ? ` Not sent to ${skipped.map(label).join(', ')}: ${lower(skipped[0].why)}` : '';
  if (sent.length) return `${cap(intakeText(s))} and sent to ${sent.map(label).join(', ')}.${skippedText}`;
  if (skipped.length)
    return `${cap(intakeText(s))}; not sent to ${skipped.map(label).join(', ')}: ${lower(skipped[0].why)}`;
  if (s.test && input.form.sandbox) return 'A sandbox submission: stored, never delivered.';
  const none = routes.length
    ? `no route planned a delivery (${routes.length} route(s) now; see routes for what is known)`
    : 'the form and its streams had no route, so nothing was sent';
  return `${cap(intakeText(s))}; ${none}.`;
}

const lower = (t: string) => t.charAt(0).toLowerCase() + t.slice(1);
const cap = (t: string) => t.charAt(0).toUpperCase() + t.slice(1);

/** The whole explanation of one submission. */
export function presentExplanation(input: ExplainInput): ExplanationOut {
  const s = input.submission;
  const deliveries = presentDeliveries(input);
  const routes = presentRoutes(input, deliveries);
  return {
    submission_id: s.id,
    form_id: s.formId,
    status: s.status as ExplanationOut['status'],
    quarantine_reason: s.quarantineReason,
    test: s.test,
    received_at: s.receivedAt.toISOString(),
    outcome: outcomeOf(deliveries),
    summary: summaryOf(input, deliveries, routes),
    checks: intakeChecks(input),
    routes,
    deliveries,
  };
}
