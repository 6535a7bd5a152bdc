import type { Config } from '../config.js';
import type { Outbound } from '../core/outbound.js';
import type { Mailer } from '../mail.js';

export type { HttpResult, Outbound } from '../core/outbound.js';

/**
 * What one attempt at a destination came to. Adapters never throw: every failure is a result,
 * and only settling decides between sent, failed (retry) and dead.
 */
export interface SendResult {
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  /** At most 500 characters of what the destination answered. */
  response_excerpt: string;
  error: string | null;
  /** false when retrying cannot help (webhook 410, adapter not available, bad config). */
  retryable: boolean;
  /** A delay the destination asked for (Retry-After on 429/503), in milliseconds. */
  retry_after_ms?: number;
}

/** A destination as the worker reads it (config with its secrets). */
export interface DestinationTarget {
  id: string;
  /** A DestinationType as stored ('webhook' for system webhooks). */
  type: string;
  name: string;
  config: Record<string, unknown>;
}

/** Everything an adapter may need to render and send one delivery. */
export interface OutboundMessage {
  /** Delivery id (dl_…, whd_… or a test id): Service-Delivery and webhook-id. */
  deliveryId: string;
  /** Service-Event: submission.received, digest.ready, destination.test or an event type. */
  event: string;
  /** The exact JSON body a webhook receives; kept on the delivery as its snapshot. */
  payload: Record<string, unknown>;
  /** What templates see: form, submission, data, meta (and, for digests, submissions). */
  context: {
    form: { id: string; slug: string; name: string; settings: Record<string, unknown> };
    submission: Record<string, unknown> | null;
    data: Record<string, unknown>;
    meta: Record<string, unknown>;
    /** `_subject` control field of the submission, when it gave one. */
    subject_hint: string | null;
    /** Digest deliveries: the period's submissions, each {id, data, meta, received_at}. */
    submissions?: Record<string, unknown>[];
    /** Double opt-in confirmation mail: the signed /c/{token} link (made when it is sent, never stored). */
    confirm_url?: string;
  };
}

export interface AdapterDeps {
  config: Config;
  mailer: Mailer;
  outbound: Outbound;
}

/** Per-attempt options the delivery policy gives (the type's timeout). */
export interface SendOptions {
  timeoutMs?: number;
}

export type Adapter = (
  deps: AdapterDeps,
  dest: DestinationTarget,
  msg: OutboundMessage,
  opts?: SendOptions,
) => Promise<SendResult>;
