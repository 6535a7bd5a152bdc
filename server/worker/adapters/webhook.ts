import type { HttpResult, Outbound } from '../../core/outbound.js';
import { serviceSignature, standardWebhookHeaders } from '../sign.js';
import type { Adapter, SendResult } from '../types.js';

/** Headers a destination's own `config.headers` may not replace. */
const RESERVED = /^(content-type|content-length|host|user-agent|service-.*|webhook-.*)$/i;

/**
 * One signed JSON POST: Service-Delivery, Service-Event, Service-Signature when a secret is set,
 * and the Standard Webhooks headers. Shared by webhook destinations and system webhooks.
 */
export async function sendSigned(
  outbound: Outbound,
  o: {
    url: string;
    secret: string | null;
    headers?: Record<string, string>;
    deliveryId: string;
    event: string;
    payload: Record<string, unknown>;
    now?: Date;
    timeoutMs?: number;
  },
): Promise<HttpResult> {
  const body = JSON.stringify(o.payload);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(o.headers ?? {})) {
    if (!RESERVED.test(name) && typeof value === 'string') headers[name] = value;
  }
  headers['content-type'] = 'application/json';
  headers['user-agent'] = 'formsvc/0.1';
  headers['service-delivery'] = o.deliveryId;
  headers['service-event'] = o.event;
  if (o.secret) {
    const t = Math.floor((o.now ?? new Date()).getTime() / 1000);
    headers['service-signature'] = serviceSignature(o.secret, body, t);
    Object.assign(headers, standardWebhookHeaders(o.deliveryId, body, o.secret, t));
  }
  return outbound.post(o.url, body, headers, o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : undefined);
}

/** HttpResult → SendResult with the webhook rules: 2xx sent, 410 final, 3xx not followed, else retried. */
export function webhookResult(r: HttpResult): SendResult {
  const base = {
    ok: r.ok,
    status_code: r.status,
    latency_ms: r.latencyMs,
    response_excerpt: r.excerpt,
    retryable: true,
    ...(r.retryAfterMs !== undefined ? { retry_after_ms: r.retryAfterMs } : {}),
  };
  if (r.ok) return { ...base, error: null };
  if (r.status === null) return { ...base, error: r.error ?? 'request failed', retryable: !r.refused };
  if (r.status === 410) return { ...base, error: 'receiver answered 410 Gone: no further attempts', retryable: false };
  if (r.status >= 300 && r.status < 400) {
    return {
      ...base,
      error: `receiver answered ${r.status}; redirects are not followed (Location: ${r.location ?? 'none'})`,
    };
  }
  return { ...base, error: `receiver answered ${r.status}` };
}

export const webhookAdapter: Adapter = async (deps, dest, msg, opts) => {
  const config = dest.config;
  const url = typeof config.url === 'string' ? config.url : '';
  const secret = typeof config.secret === 'string' && config.secret ? config.secret : null;
  const headers =
    config.headers && typeof config.headers === 'object' ? (config.headers as Record<string, string>) : {};
  const r = await sendSigned(deps.outbound, {
    url,
    secret,
    headers,
    deliveryId: msg.deliveryId,
    event: msg.event,
    payload: msg.payload,
    timeoutMs: opts?.timeoutMs,
  });
  return webhookResult(r);
};
