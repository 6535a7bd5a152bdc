import type { z } from '../../shared/contracts/common.js';
import type { Delivery, DeliveryResult } from '../../shared/contracts/deliveries.js';
import { SUBMITTER_TARGET } from '../../shared/contracts/submitter.js';
import type { DeliveryRow } from '../db/rows.js';

export type DeliveryOut = z.output<typeof Delivery>;
export type DeliveryResultOut = z.output<typeof DeliveryResult>;

// A Telegram Bot API URL carries the bot token (…/bot<id>:<secret>/sendMessage); errors may quote it.
const BOT_TOKEN = /bot\d+:[A-Za-z0-9_-]+/g;
export const scrubSecrets = (s: string) => s.replace(BOT_TOKEN, 'bot[redacted]');
const scrub = scrubSecrets;

/** Stored last_response (written by the worker) → DeliveryResult, whatever keys the row holds; bot tokens redacted. */
export function presentResult(raw: Record<string, unknown> | null): DeliveryResultOut | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const status = raw.status_code;
  const latency = Number(raw.latency_ms);
  return {
    ok: raw.ok === true,
    status_code: typeof status === 'number' && Number.isInteger(status) ? status : null,
    latency_ms: Number.isFinite(latency) ? latency : 0,
    response_excerpt: typeof raw.response_excerpt === 'string' ? scrub(raw.response_excerpt) : '',
    error: typeof raw.error === 'string' ? scrub(raw.error) : null,
  };
}

/** Row → wire Delivery (bot tokens redacted from the last response and error). */
export function presentDelivery(d: DeliveryRow): DeliveryOut {
  return {
    id: d.id,
    submission_id: d.submissionId,
    route_id: d.routeId,
    destination_id: d.destinationId,
    status: d.status as DeliveryOut['status'],
    skip_reason: d.skipReason as DeliveryOut['skip_reason'],
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    schema_version: d.schemaVersion,
    payload: d.payload,
    last_response: presentResult(d.lastResponse),
    last_error: d.lastError === null ? null : scrub(d.lastError),
    created_at: d.createdAt.toISOString(),
    sent_at: d.sentAt?.toISOString() ?? null,
    // Mail to the submitter only (a route's delivery has no kind, as before the extension).
    ...(d.destinationId === SUBMITTER_TARGET ? { kind: d.routeId as DeliveryOut['kind'] } : {}),
  };
}
