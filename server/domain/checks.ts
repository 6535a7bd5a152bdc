import type { Deps } from '../core/deps.js';

export type Verdict =
  | { status: 'received'; reason: null }
  | { status: 'spam'; reason: null }
  | {
      status: 'quarantined';
      reason:
        | 'origin_rejected'
        | 'rate_limited'
        | 'turnstile_failed'
        | 'challenge_failed'
        | 'over_quota'
        | 'pending_confirmation'
        | 'schema_violation'
        | 'spam_suspected'
        | 'duplicate';
    };

/** Challenge answers: Turnstile's token, the proof-of-work widget's payload (its default name). */
export const CONTROL_FIELDS = new Set(['cf-turnstile-response', 'altcha']);
const TRUE = new Set(['true', '1', 'on', 'yes']);

export interface Control {
  redirect?: string;
  test: boolean;
  idempotency?: string;
  subject?: string;
  honeypotFilled: boolean;
  turnstileToken?: string;
  /** `altcha`: the proof-of-work widget's payload (domain/pow.ts) */
  altcha?: string;
  /** `_hosted`: the post came from the form's hosted page (/f/{formId}), which a 422 answer re-renders. */
  hosted?: boolean;
  /** `_rendered`: the page's signed render time (server/spam/render-token.ts), checked by the spam verdict. */
  rendered?: string;
}

/** A honeypot is filled when any of its values is (a repeated one, or a file). */
const filled = (s: unknown) => s !== undefined && s !== null && s !== '' && s !== false;
const str = (v: unknown) => (Array.isArray(v) ? v[0] : v) as unknown;

/**
 * Splits control fields (leading "_", the challenge token, the honeypot) from the data. A repeated
 * control field counts by its first text value: a file part under a control name is kept as an
 * attachment but sets nothing (its `fl_` id is no key, subject, redirect or token; a honeypot is
 * filled when any of its values is, a file too). File parts land after the text parts, in the order their writes finish.
 */
export function splitControl(fields: Record<string, unknown>, honeypot: string, fileIds?: ReadonlySet<string>) {
  const data: Record<string, unknown> = {};
  const control: Control = { test: false, honeypotFilled: false };
  for (const [k, v] of Object.entries(fields)) {
    if (k === honeypot) {
      control.honeypotFilled = (Array.isArray(v) ? v : [v]).some(filled);
      continue;
    }
    if (k.startsWith('_') || CONTROL_FIELDS.has(k)) {
      const s = str(fileIds && Array.isArray(v) ? v.filter((x) => !fileIds.has(x)) : v);
      if (typeof s === 'string' && fileIds?.has(s)) continue;
      if (k === '_redirect' && typeof s === 'string') control.redirect = s;
      if (k === '_test') control.test = s === true || (typeof s === 'string' && TRUE.has(s.toLowerCase()));
      if (k === '_idempotency' && (typeof s === 'string' || typeof s === 'number')) control.idempotency = String(s);
      if (k === '_subject' && typeof s === 'string') control.subject = s.slice(0, 300);
      if (k === 'cf-turnstile-response' && typeof s === 'string') control.turnstileToken = s;
      if (k === 'altcha' && typeof s === 'string') control.altcha = s;
      if (k === '_rendered' && typeof s === 'string') control.rendered = s.slice(0, 100);
      if (k === '_hosted') control.hosted = s === true || (typeof s === 'string' && TRUE.has(s.toLowerCase()));
      continue;
    }
    data[k] = v;
  }
  return { data, control };
}

/** An origin as scheme://host[:port], lowercase, without a trailing slash; null when not a URL. */
export function canonicalOrigin(value: string | undefined | null): string | null {
  if (!value) return null;
  // Answers are kept: intake asks for the same few values (the service's own base URL, the sites
  // that post) on every request, and a URL parse costs more than the rest of the check. Bounded:
  // values come from clients, so long ones are not kept and a full table starts again.
  const kept = origins.get(value);
  if (kept !== undefined) return kept;
  const origin = parseOrigin(value);
  if (value.length <= 200) {
    if (origins.size >= 512) origins.clear();
    origins.set(value, origin);
  }
  return origin;
}

const origins = new Map<string, string | null>();

function parseOrigin(value: string): string | null {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.origin.toLowerCase();
  } catch {
    return null;
  }
}

export function originAllowed(allowed: unknown, origin: string | null, self?: string | null): boolean {
  if (!Array.isArray(allowed) || allowed.length === 0) return true;
  if (!origin) return false;
  // The service's own pages (the hosted form page) post from its own origin.
  if (self && origin === self) return true;
  return allowed.some((a) => a === '*' || canonicalOrigin(String(a)) === origin);
}

/** Cloudflare Turnstile siteverify, 5 s timeout; any failure (also network) fails the check. */
export async function verifyTurnstile(deps: Deps, secret: string | undefined, token: string | undefined, ip: string) {
  if (!token) return { ok: false, error: 'no cf-turnstile-response token' };
  if (!secret) return { ok: false, error: 'no challenge secret configured' };
  try {
    const res = await deps.fetch(deps.config.turnstileVerifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret, response: token, remoteip: ip }).toString(),
      signal: AbortSignal.timeout(5000),
      redirect: 'error',
    });
    const body = (await res.json()) as { success?: boolean; 'error-codes'?: string[] };
    return body.success === true
      ? { ok: true }
      : { ok: false, error: (body['error-codes'] ?? []).join(',') || 'rejected' };
  } catch (err) {
    return { ok: false, error: `verify failed: ${(err as Error).message}` };
  }
}
