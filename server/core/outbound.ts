/** What one outbound HTTP request came to. Never thrown: refused targets, timeouts and resets are results. */
export interface HttpResult {
  /** A 2xx answer. */
  ok: boolean;
  status: number | null;
  latencyMs: number;
  /** At most 500 characters of the response body (never read past a small cap). */
  excerpt: string;
  error: string | null;
  /** Retry-After of a 429 or 503, in milliseconds. */
  retryAfterMs?: number;
  /** The SSRF guard refused the target (nothing was sent). */
  refused?: boolean;
  /** Location of a 3xx answer (redirects are never followed). */
  location?: string;
}

/**
 * Outbound HTTP for every adapter (webhooks, system webhooks, Telegram, destination tests):
 * undici with one dedicated Agent, the SSRF guard checking the resolved address at connect time,
 * a per-request timeout, no redirects followed, and a capped response read.
 */
export interface Outbound {
  post(url: string, body: string, headers: Record<string, string>, opts?: { timeoutMs?: number }): Promise<HttpResult>;
  close(): Promise<void>;
}
