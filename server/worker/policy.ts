import { DESTINATION_TYPES, type DestinationType } from '../../shared/contracts/destinations.js';
import type { Config } from '../config.js';
import { discordAdapter } from './adapters/discord.js';
import { emailAdapter } from './adapters/email.js';
import { slackAdapter } from './adapters/slack.js';
import { submitterAdapter } from './adapters/submitter.js';
import { telegramAdapter } from './adapters/telegram.js';
import { webhookAdapter } from './adapters/webhook.js';
import { backoffMs } from './backoff.js';
import { SUBMITTER_TARGET } from './submitter-target.js';
import type { Adapter, AdapterDeps, DestinationTarget, OutboundMessage, SendResult } from './types.js';

/** How deliveries to one destination type are sent and retried. */
export interface DeliveryPolicy {
  /** Renders and sends one attempt; never throws. */
  adapter: Adapter;
  /** Attempts at most before a delivery is dead (stored on the row when it is planned). */
  maxAttempts: number;
  /** Delay before the next attempt after `attempts` attempts (a Retry-After asked for included). */
  backoffMs: (attempts: number, baseMs: number, retryAfterMs?: number) => number;
  /** Time one attempt may take. */
  timeoutMs: (config: Config) => number;
  /** Answers that end the delivery at once: retrying cannot help (adapters may add their own, e.g. bad config). */
  permanent: ReadonlySet<number>;
}

const httpTimeout = (config: Config) => config.webhookTimeoutMs;

/**
 * The delivery policy of every destination type. `satisfies Record<DestinationType, …>`: a type
 * added to the contract without an entry here does not compile.
 */
export const POLICIES = {
  webhook: { adapter: webhookAdapter, maxAttempts: 10, backoffMs, timeoutMs: httpTimeout, permanent: new Set([410]) },
  email: { adapter: emailAdapter, maxAttempts: 8, backoffMs, timeoutMs: httpTimeout, permanent: new Set() },
  // Bad token, chat not found, bot blocked or kicked.
  telegram: {
    adapter: telegramAdapter,
    maxAttempts: 8,
    backoffMs,
    timeoutMs: httpTimeout,
    permanent: new Set([400, 401, 403, 404]),
  },
  // 404 and 401: the incoming webhook was deleted (or its token revoked).
  slack: { adapter: slackAdapter, maxAttempts: 8, backoffMs, timeoutMs: httpTimeout, permanent: new Set([401, 404]) },
  discord: {
    adapter: discordAdapter,
    maxAttempts: 8,
    backoffMs,
    timeoutMs: httpTimeout,
    permanent: new Set([401, 404]),
  },
} as const satisfies Record<DestinationType, DeliveryPolicy>;

const isType = (type: string): type is DestinationType => (DESTINATION_TYPES as readonly string[]).includes(type);

const unknownAdapter: Adapter = async (_deps, dest) => ({
  ok: false,
  status_code: null,
  latency_ms: 0,
  response_excerpt: '',
  error: `unknown destination type "${dest.type}"; use ${DESTINATION_TYPES.join(', ')}`,
  retryable: false,
});

/** Rows whose type is unknown (a destination deleted since, or a type no longer served): one attempt, no retry. */
const UNKNOWN: DeliveryPolicy = {
  adapter: unknownAdapter,
  maxAttempts: 8,
  backoffMs,
  timeoutMs: httpTimeout,
  permanent: new Set(),
};

/** Mail to submitters (autoresponses, confirmations): retried and given up like email. */
export const SUBMITTER_POLICY: DeliveryPolicy = { ...POLICIES.email, adapter: submitterAdapter };

/** The policy of a destination type as stored (a string from the database). */
export function policyOf(type: string | null | undefined): DeliveryPolicy {
  if (type === SUBMITTER_TARGET) return SUBMITTER_POLICY;
  return type && isType(type) ? POLICIES[type] : UNKNOWN;
}

/** Sends one attempt through the type's adapter with the type's timeout. */
export function deliver(deps: AdapterDeps, dest: DestinationTarget, msg: OutboundMessage): Promise<SendResult> {
  const policy = policyOf(dest.type);
  return policy.adapter(deps, dest, msg, { timeoutMs: policy.timeoutMs(deps.config) });
}

/** Whether an attempt's result ends its delivery: the adapter said so, or the answer is permanent for the type. */
export function isFinal(policy: DeliveryPolicy, r: SendResult): boolean {
  return !r.retryable || (r.status_code !== null && policy.permanent.has(r.status_code));
}
