import type { HttpResult } from '../../core/outbound.js';
import { digestItems, fieldEntries, formatValue } from '../template.js';
import type { Adapter, OutboundMessage, SendResult } from '../types.js';

type Obj = Record<string, unknown>;

/**
 * The units a chat text may be cut between: the entities Slack escaping writes, a backslash
 * escape (Discord markdown), a surrogate pair, a single character.
 */
const UNIT = /&(?:amp|lt|gt);|\\[\s\S]|[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]/y;

/**
 * Cuts text to at most `max` characters, ending with an ellipsis, without splitting an escape or
 * a surrogate pair (so a cut never turns `&lt;` back into a bare `&` or a `\*` into a `*`).
 * Reads no further than `max` characters, whatever the length of the text.
 */
export function cutText(s: string, max: number, ellipsis = '…'): string {
  if (s.length <= max) return s;
  const limit = Math.max(0, max - ellipsis.length);
  const re = new RegExp(UNIT.source, 'y');
  let end = 0;
  for (let m = re.exec(s); m && re.lastIndex <= limit; m = re.exec(s)) end = re.lastIndex;
  return s.slice(0, end) + ellipsis;
}

/** "… and 12 more fields", "… and 1 more field": what a cut left out (`noun` in the plural). */
export function moreText(n: number, noun: string): string {
  return `… and ${n} more ${n === 1 ? noun.replace(/s$/, '') : noun}`;
}

/**
 * Joins lines within `max` characters: the lines that fit whole, then "… and N more <noun>" for
 * the rest (room for it is kept at every step, so it always fits). A first line longer than the
 * room is cut rather than dropped.
 */
export function listLines(lines: string[], max: number, noun: string, sep = '\n'): string {
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    const rest = lines.length - i - 1;
    const tail = rest ? `${sep}${moreText(rest, noun)}` : '';
    const prefix = out ? out + sep : '';
    if (prefix.length + lines[i].length + tail.length <= max) {
      out = prefix + lines[i];
      continue;
    }
    if (out) return `${prefix}${moreText(rest + 1, noun)}`;
    return cutText(lines[i], Math.max(1, max - tail.length)) + tail;
  }
  return out;
}

/**
 * A value on one line: its line breaks are shown as ↵, so it cannot begin a line of its own in a
 * chat message (a forged "field: value" line, a heading, a quote or a list item).
 */
export function oneLine(s: string): string {
  return s.replace(/\r\n|[\r\n\v\f\u0085\u2028\u2029]/g, '↵');
}

/** The fields of a message as escaped [name, value] pairs. */
export function escapedFields(data: Obj, esc: (s: string) => string): [string, string][] {
  return fieldEntries(data).map(([name, value]) => [esc(name), esc(value)]);
}

/** "Submission sb_… (test) · 2026-…" for a context line or a footer; empty for a message without a submission. */
export function submissionLine(ctx: OutboundMessage['context']): string {
  const sub = ctx.submission;
  if (!sub?.id) return '';
  const at = formatValue(sub.received_at ?? ctx.meta.received_at);
  return `Submission ${formatValue(sub.id)}${sub.test === true ? ' (test)' : ''}${at ? ` · ${at}` : ''}`;
}

/** A digest's header: "Digest: 3 submissions to Contact". */
export function digestTitle(ctx: OutboundMessage['context']): string {
  const n = digestItems(ctx).length;
  return `Digest: ${n} submission${n === 1 ? '' : 's'} to ${ctx.form.name}`;
}

/** A provider's answer as one short line for last_error (HTML and long bodies included). */
export function answerText(excerpt: string, max = 200): string {
  return cutText(excerpt.replace(/\s+/g, ' ').trim(), max);
}

/**
 * HttpResult → SendResult with the rules both chat providers share: `accepted` decides a success;
 * 401/404 say the webhook was deleted (the delivery policy makes them final); a 3xx is not
 * followed; a 429 carries the delay asked for; a refused target is final; anything else is retried
 * with the provider's text in the error.
 */
export function chatResult(
  provider: 'slack' | 'discord',
  http: HttpResult,
  accepted: boolean,
  detail: (excerpt: string) => string,
  retryAfterMs?: number,
): SendResult {
  const base = { status_code: http.status, latency_ms: http.latencyMs, response_excerpt: http.excerpt };
  if (accepted) return { ...base, ok: true, error: null, retryable: true };
  const fail = (error: string, retryable = true): SendResult => ({
    ...base,
    ok: false,
    error: `${provider}: ${error}`,
    retryable,
    ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}),
  });
  if (http.status === null) return fail(http.error ?? 'request failed', http.refused !== true);
  const said = detail(http.excerpt);
  const answer = `HTTP ${http.status}${said ? `: ${said}` : ''}`;
  if (http.status === 404 || http.status === 401) {
    return fail(`the incoming webhook was deleted or revoked (${answer}); create a new one and update config.url`);
  }
  if (http.status >= 300 && http.status < 400) {
    return fail(`answered ${http.status}; redirects are not followed (Location: ${http.location ?? 'none'})`);
  }
  if (http.status === 429) return fail(`rate limited (${answer})`);
  return fail(http.ok ? `unexpected answer (${answer})` : `answered ${answer}`);
}

/**
 * The shared part of a chat adapter: the destination's `config.url` (a missing one fails for good),
 * the message built from the submission or the digest with the optional `config.template`, and one
 * guarded JSON POST within the policy's timeout. `send` decides what the provider's answer means.
 */
export function postChat(
  provider: 'slack' | 'discord',
  urlHint: string,
  build: (msg: OutboundMessage, template: string | null) => unknown,
  settle: (http: HttpResult) => SendResult,
): Adapter {
  return async (deps, dest, msg, opts) => {
    const url = typeof dest.config.url === 'string' ? dest.config.url : '';
    if (!url) {
      return {
        ok: false,
        status_code: null,
        latency_ms: 0,
        response_excerpt: '',
        error: `${provider}: the destination needs config.url (${urlHint})`,
        retryable: false,
      };
    }
    const template = typeof dest.config.template === 'string' && dest.config.template ? dest.config.template : null;
    const http = await deps.outbound.post(
      url,
      JSON.stringify(build(msg, template)),
      { 'content-type': 'application/json', 'user-agent': 'formsvc/0.1' },
      { timeoutMs: opts?.timeoutMs ?? deps.config.webhookTimeoutMs },
    );
    return settle(http);
  };
}
