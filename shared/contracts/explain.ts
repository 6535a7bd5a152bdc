import { getById, Timestamp, z } from './common.js';
import { DELIVERY_STATUSES, SKIP_REASONS } from './deliveries.js';
import { SpamSignal } from './submissions.js';

/**
 * Extension: GET /v1/submissions/{id}/explain (docs/explain.md). Everything here is read from
 * what was stored when the submission came in and as its deliveries were attempted; nothing is
 * recomputed from today's settings.
 */

export const INTAKE_CHECKS = [
  'origin',
  'spam',
  'rate_limit',
  'challenge',
  'schema',
  'duplicate',
  'quota',
  'confirmation',
  'paused',
] as const;

/**
 * passed: the check let the submission through; failed: it stopped or quarantined it; flagged: it
 * found something and let it through (observe mode's schema issues); waiting: a double opt-in
 * confirmation not given yet; not_checked: intake did not get that far, or the check does not apply;
 * unknown: nothing stored says.
 */
export const CHECK_VERDICTS = ['passed', 'failed', 'flagged', 'waiting', 'not_checked', 'unknown'] as const;

export const IntakeCheck = z
  .object({
    check: z.enum(INTAKE_CHECKS),
    verdict: z.enum(CHECK_VERDICTS),
    reason: z.string().meta({ description: 'one sentence for a person, from the stored submission' }),
    spam: z
      .object({ score: z.number(), reasons: z.array(z.string()), signals: z.array(SpamSignal) })
      .optional()
      .meta({ description: 'check "spam" only: the stored verdict (signals empty on older submissions)' }),
    violated_paths: z
      .array(z.string())
      .optional()
      .meta({ description: 'check "schema" only: the JSON paths of the stored validation issues' }),
    schema_version: z.number().int().nullable().optional().meta({ description: 'check "schema" only' }),
    duplicate_of: z.string().nullable().optional().meta({ description: 'check "duplicate" only' }),
  })
  .meta({ id: 'ExplainCheck' });

/**
 * Why a route planned a delivery or not. planned: a delivery is due, sent or being sent;
 * held: planned held (over quota, or waiting for the submitter's confirmation); window, quality,
 * match, limit, erased: the delivery's stored skip_reason; destination_disabled: planned, and
 * waiting unattempted while its destination is switched off; approval_pending (extension, with
 * settings.approve_destinations): planned, waiting unattempted until an owner or admin approves the
 * destination; rejected: the stored skip_reason of one a person rejected; not_planned: no delivery row exists
 * for this route and submission (`detail` says what is known).
 */
export const ROUTE_REASONS = [
  'planned',
  'held',
  'window',
  'quality',
  'match',
  'limit',
  'erased',
  'destination_disabled',
  'approval_pending',
  'rejected',
  'not_planned',
] as const;

export const ExplainRoute = z
  .object({
    route_id: z
      .string()
      .meta({ description: 'the route; "autoresponder" or "confirmation" for mail to the submitter' }),
    via: z.enum(['direct', 'stream', 'submitter']).meta({
      description: "direct: the form's own route; stream: a route of a stream the form feeds; submitter: built-in mail",
    }),
    stream_id: z.string().nullable(),
    destination_id: z.string(),
    destination_name: z.string().nullable().meta({ description: 'null when the destination was deleted' }),
    delivery_id: z.string().nullable().meta({ description: 'null when the route planned no delivery row' }),
    reason: z.enum(ROUTE_REASONS),
    detail: z.string().meta({ description: 'one sentence for a person' }),
  })
  .meta({ id: 'ExplainRoute' });

export const ATTEMPT_OUTCOMES = ['sent', 'failed', 'dead'] as const;

export const ExplainAttempt = z
  .object({
    n: z.number().int().meta({ description: 'the attempt number in its run (a manual retry starts a new run at 1)' }),
    started_at: Timestamp,
    latency_ms: z.number().int(),
    status_code: z.number().int().nullable().meta({ description: 'the HTTP status; null when there was none' }),
    error: z.string().nullable(),
    next_attempt_at: Timestamp.nullable().meta({ description: 'when a failed attempt was to be tried again' }),
    outcome: z.enum(ATTEMPT_OUTCOMES),
  })
  .meta({ id: 'ExplainAttempt' });

/**
 * Why a delivery is where it is: sent; gave_up (dead after max attempts); refused (dead at once:
 * an answer retrying cannot change, e.g. 410, or a bad configuration); skipped; held;
 * destination_disabled (waiting unattempted); approval_pending (waiting unattempted for an owner or
 * admin to approve its destination); retrying (failed, tried again at next_attempt_at);
 * queued (pending or being sent).
 */
export const STOP_REASONS = [
  'sent',
  'gave_up',
  'refused',
  'skipped',
  'held',
  'destination_disabled',
  'approval_pending',
  'retrying',
  'queued',
] as const;

export const ExplainDelivery = z
  .object({
    id: z.string(),
    route_id: z.string(),
    destination_id: z.string().meta({ description: '"submitter" for mail to the submitter' }),
    destination_name: z.string().nullable(),
    destination_type: z
      .string()
      .nullable()
      .meta({ description: 'webhook, email, slack, …; "submitter" for built-in mail' }),
    status: z.enum(DELIVERY_STATUSES),
    skip_reason: z.enum(SKIP_REASONS).nullable(),
    next_attempt_at: Timestamp.nullable(),
    sent_at: Timestamp.nullable(),
    state: z.enum(STOP_REASONS),
    why: z.string().meta({ description: 'one sentence for a person: why it stopped or what it waits for' }),
    attempts: z.array(ExplainAttempt).meta({
      description:
        'every recorded attempt, oldest first (kept since this extension; a delivery keeps its latest 40 across manual retries plus the current run)',
    }),
  })
  .meta({ id: 'ExplainDelivery' });

/**
 * The overall outcome: sent (every planned delivery sent), partly_sent, in_progress (queued or
 * retrying), waiting (held, or waiting for a disabled destination), failed (a delivery gave up or
 * was refused), not_sent (every delivery skipped), nothing_planned (no delivery row).
 */
export const EXPLAIN_OUTCOMES = [
  'sent',
  'partly_sent',
  'in_progress',
  'waiting',
  'failed',
  'not_sent',
  'nothing_planned',
] as const;

export const SubmissionExplanation = z
  .object({
    submission_id: z.string(),
    form_id: z.string(),
    status: z.enum(['received', 'quarantined', 'spam']),
    quarantine_reason: z.string().nullable(),
    test: z.boolean(),
    received_at: Timestamp,
    outcome: z.enum(EXPLAIN_OUTCOMES),
    summary: z.string().meta({
      description: 'one line a person can read: where the submission ended and, when it can, the call that moves it on',
    }),
    checks: z.array(IntakeCheck).meta({ description: 'each intake check in the order intake runs them' }),
    routes: z.array(ExplainRoute).meta({
      description:
        'each route considered: those with a delivery row for this submission, then the current routes of the form and its streams that have none',
    }),
    deliveries: z.array(ExplainDelivery).meta({ description: 'each delivery of the submission, oldest first' }),
  })
  .meta({ id: 'SubmissionExplanation' });

export const explainOps = {
  submission: getById(SubmissionExplanation, {
    path: '/v1/submissions/{id}/explain',
    operationId: 'submissions_explain',
    tags: ['submissions'],
    summary:
      'Extension: why a submission ended where it did, as data read from what was stored: each intake check ' +
      'with its verdict, each route considered and why it planned a delivery or not, each delivery with every ' +
      'attempt and why it stopped, and a one-line summary',
    also: ['forbidden'],
  }),
};
