import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { BillingWebhookBody } from '../../shared/contracts/billing.js';
import type { z } from '../../shared/contracts/common.js';
import { ops } from '../../shared/contracts/index.js';
import type { Config } from '../config.js';
import type { Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { billingEvents, organizations } from '../db/schema.js';
import { routeOf } from './next-steps.js';

/** Standard Webhooks: a message more than this far from our clock is refused (replay window). */
export const WEBHOOK_TOLERANCE_S = 300;

export type BillingWebhook = z.output<typeof BillingWebhookBody>;

/** The HMAC key: "whsec_<base64>" is decoded (Standard Webhooks); any other value is used as raw bytes. */
export function webhookKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');
}

/** base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, the Standard Webhooks v1 signature. */
export function signWebhook(key: Buffer, id: string, timestamp: string, body: string): string {
  return crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

const refused = (message: string, hint: string) => new ApiError('unauthorized', message, { hint });

/**
 * Checks a billing webhook before its body is parsed: over the raw body text, every "v1,<sig>"
 * candidate compared in constant time, then the timestamp window. Returns the webhook-id.
 */
export function verifyWebhook(
  config: Config,
  now: Date,
  headers: { id?: string; timestamp?: string; signature?: string },
  rawBody: string,
): string {
  if (!config.billingWebhookSecret) {
    throw new ApiError('not_found', 'The billing webhook is not enabled on this server.', {
      hint: 'The operator enables it by setting BILLING_WEBHOOK_SECRET (the signing secret of the billing provider).',
    });
  }
  const { id, timestamp, signature } = headers;
  const missing = [
    ['webhook-id', id],
    ['webhook-timestamp', timestamp],
    ['webhook-signature', signature],
  ]
    .filter(([, v]) => !v)
    .map(([k]) => k);
  if (missing.length || !id || !timestamp || !signature) {
    throw new ApiError('bad_request', `Missing header ${missing.join(', ')}.`, {
      hint: 'Send webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks).',
      details: { missing },
    });
  }
  if (id.length > 255 || !/^\d{1,12}$/.test(timestamp)) {
    throw new ApiError('bad_request', 'webhook-id must be 1 to 255 characters and webhook-timestamp unix seconds.', {
      hint: 'Send webhook-timestamp as an integer number of seconds since the epoch.',
    });
  }
  const expected = Buffer.from(signWebhook(webhookKey(config.billingWebhookSecret), id, timestamp, rawBody), 'base64');
  let match = false;
  for (const part of signature.split(' ')) {
    const [version, value] = part.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    // timingSafeEqual needs equal lengths; the length of an HMAC is public anyway.
    if (given.length === expected.length && crypto.timingSafeEqual(given, expected)) match = true;
  }
  if (!match) {
    throw refused(
      'The webhook signature does not match.',
      'Sign "<webhook-id>.<webhook-timestamp>.<raw body>" with HMAC-SHA256 and the key of BILLING_WEBHOOK_SECRET; send "v1,<base64>".',
    );
  }
  const skew = Math.abs(now.getTime() / 1000 - Number(timestamp));
  if (skew > WEBHOOK_TOLERANCE_S) {
    throw refused(
      `The webhook timestamp is stale: ${Math.round(skew)} s from the server clock (at most ${WEBHOOK_TOLERANCE_S} s).`,
      'Send it again with a fresh webhook-timestamp and signature, and check the sender clock.',
    );
  }
  return id;
}

/**
 * Applies a verified webhook once. The billing_events row (keyed by webhook-id) and the plan change
 * commit together, so a replay, even concurrent, finds the row and changes nothing.
 */
export async function applyWebhook(deps: Deps, webhookId: string, event: BillingWebhook) {
  const orgId = event.data.organization_id;
  return deps.database.db.transaction(async (tx) => {
    const fresh = await tx
      .insert(billingEvents)
      .values({ id: webhookId, type: event.type, orgId })
      .onConflictDoNothing()
      .returning({ id: billingEvents.id });
    if (!fresh.length) return { ok: true as const, duplicate: true };
    const set =
      event.type === 'plan.updated'
        ? {
            plan: event.data.plan,
            planSource: 'billing',
            planExpiresAt: event.data.expires_at ? new Date(event.data.expires_at) : null,
            planNote: event.data.note ?? null,
          }
        : { plan: 'free', planSource: 'free', planExpiresAt: null, planNote: null };
    const done = await tx
      .update(organizations)
      .set(set)
      .where(eq(organizations.id, orgId))
      .returning({ id: organizations.id });
    // Throwing rolls back the billing_events row too, so a corrected redelivery is not taken for a replay.
    if (!done.length) {
      throw new ApiError('not_found', `Organization ${orgId} was not found.`, {
        hint: `data.organization_id must be the id of an organization on this server (${routeOf(ops.me.get)} shows it).`,
      });
    }
    return { ok: true as const, duplicate: false };
  });
}
