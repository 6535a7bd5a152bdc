import crypto from 'node:crypto';

/** `Service-Signature: t=<unix>,v1=<hex>`: HMAC-SHA256 with the secret over `<t>.<raw body>`. */
export function serviceSignature(secret: string, body: string, unixSeconds: number): string {
  const v1 = crypto.createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/**
 * The Standard Webhooks headers, so receivers can verify with stock libraries: HMAC-SHA256 over
 * `<id>.<t>.<body>`, base64. The key is the base64 part of a `whsec_…` secret when it decodes
 * (the Standard Webhooks convention); any other secret is used as its UTF-8 bytes.
 */
export function standardWebhookHeaders(id: string, body: string, secret: string, unixSeconds: number) {
  let key: Buffer = Buffer.from(secret, 'utf8');
  if (secret.startsWith('whsec_')) {
    const raw = secret.slice('whsec_'.length);
    const decoded = Buffer.from(raw, 'base64');
    if (
      raw.length > 0 &&
      decoded.length > 0 &&
      decoded.toString('base64').replace(/=+$/, '') === raw.replace(/=+$/, '')
    ) {
      key = decoded;
    }
  }
  const signature = crypto.createHmac('sha256', key).update(`${id}.${unixSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(unixSeconds), 'webhook-signature': `v1,${signature}` };
}
