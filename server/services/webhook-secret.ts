import crypto from 'node:crypto';

/**
 * A Standard Webhooks style secret: `whsec_` and the base64 of 24 random bytes. Service-Signature
 * keys its HMAC with the whole string; the Standard Webhooks headers with the decoded bytes, so
 * `new Webhook(secret)` of the `standardwebhooks` package verifies them as it is.
 */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(24).toString('base64')}`;
}

/** One line a receiver needs, shown beside a generated secret. */
export const VERIFY_WEBHOOK =
  'Verify each POST over its raw body: Service-Signature is t=<unix>,v1=<hex HMAC-SHA256 with the secret of "<t>.<body>">; ' +
  'or the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) with ' +
  "new Webhook(secret).verify(body, headers) from the 'standardwebhooks' package. Reject timestamps older than 5 minutes.";
