import type { HttpResult } from '../../core/outbound.js';
import {
  digestItems,
  escapeHtml,
  fieldEntries,
  formatValue,
  itemScope,
  renderTemplate,
  templateScope,
} from '../template.js';
import type { Adapter, OutboundMessage, SendResult } from '../types.js';

type Obj = Record<string, unknown>;

/** Telegram's limit on one message's text. */
export const TELEGRAM_MAX_TEXT = 4096;

/** Bot tokens look like `123456:AA…`; anything else could bend the request path, so it is refused. */
const TOKEN = /^[A-Za-z0-9:_-]{1,200}$/;

/**
 * Tags (as the template or the default message wrote them), entities, surrogate pairs, single
 * characters: the units a message may be cut between.
 */
const UNIT =
  /<\/?[A-Za-z][^<>]{0,2000}>|&(?:#\d{1,7}|#x[0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});|[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]/y;

/**
 * Cuts HTML to at most `max` characters without splitting an entity, a tag or a surrogate pair,
 * and closes the tags left open, so Telegram can still parse what remains.
 */
export function cutHtml(html: string, max = TELEGRAM_MAX_TEXT, ellipsis = '…'): string {
  if (html.length <= max) return html;
  const re = new RegExp(UNIT.source, 'y');
  const open: string[] = [];
  let best = { end: 0, closers: '' };
  for (let m = re.exec(html); m; m = re.exec(html)) {
    const unit = m[0];
    const tag = /^<(\/?)([A-Za-z][\w-]*)/.exec(unit);
    if (tag?.[1]) {
      const at = open.lastIndexOf(tag[2].toLowerCase());
      if (at >= 0) open.splice(at);
    } else if (tag) open.push(tag[2].toLowerCase());
    const end = re.lastIndex;
    if (end > max) break;
    const closers = open
      .slice()
      .reverse()
      .map((n) => `</${n}>`)
      .join('');
    if (end + ellipsis.length + closers.length <= max) best = { end, closers };
  }
  return html.slice(0, best.end) + ellipsis + best.closers;
}

const fieldLines = (data: Obj) =>
  fieldEntries(data).map(([name, value]) => `<b>${escapeHtml(name)}</b>: ${escapeHtml(value)}`);

/** The default message: a bold title, then one "<b>name</b>: value" line per field, everything escaped. */
function defaultText(ctx: OutboundMessage['context']): string {
  const lines = fieldLines(ctx.data);
  const sub = ctx.submission;
  const footer = sub?.id
    ? `\n\n<i>${escapeHtml(`Submission ${formatValue(sub.id)}${sub.test === true ? ' (test)' : ''}`)}</i>`
    : '';
  return `<b>New submission: ${escapeHtml(ctx.form.name)}</b>\n\n${lines.length ? lines.join('\n') : '<i>(no fields)</i>'}${footer}`;
}

/** A digest: a header, then each submission (through the template when there is one). */
function digestText(ctx: OutboundMessage['context'], template: string | null): string {
  const items = digestItems(ctx);
  const n = items.length;
  const header = `<b>${escapeHtml(`Digest: ${n} submission${n === 1 ? '' : 's'} to ${ctx.form.name}`)}</b>`;
  const sections = items.map((item) => {
    const scope = itemScope(ctx, item);
    if (template) return renderTemplate(template, scope, escapeHtml);
    const when = `<i>${escapeHtml(formatValue(item.received_at ?? item.id))}</i>`;
    return [when, ...fieldLines(scope.data as Obj)].join('\n');
  });
  return [header, ...sections].join('\n\n');
}

/** Removes the token (and `bot<token>` in any URL) from text that will be stored or shown. */
const scrubber = (token: string) => (s: string) => {
  const out = s.split(`bot${token}`).join('bot[redacted]');
  // The bare token too, unless it is too short to be told apart from ordinary text.
  return token.length >= 8 ? out.split(token).join('[redacted]') : out;
};

interface TelegramAnswer {
  ok?: unknown;
  description?: unknown;
  error_code?: unknown;
  parameters?: { retry_after?: unknown; migrate_to_chat_id?: unknown };
}

function parseAnswer(excerpt: string): TelegramAnswer | null {
  try {
    const v = JSON.parse(excerpt);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as TelegramAnswer) : null;
  } catch {
    return null;
  }
}

/** Bot API answer → SendResult. 400/401/403/404 (bad token, chat not found, bot blocked) are final. */
function resultOf(http: HttpResult, scrub: (s: string) => string): SendResult {
  const excerpt = scrub(http.excerpt);
  const base = { status_code: http.status, latency_ms: http.latencyMs, response_excerpt: excerpt };
  const answer = parseAnswer(http.excerpt);
  // A success answer carries the whole sent message and may be cut in the excerpt: its start is enough.
  if (http.ok && (answer?.ok === true || /^\s*\{\s*"ok"\s*:\s*true\b/.test(http.excerpt))) {
    return { ...base, ok: true, error: null, retryable: true };
  }
  let error: string;
  if (answer && typeof answer.description === 'string') {
    error = `telegram: ${answer.description}`;
    const moved = answer.parameters?.migrate_to_chat_id;
    if (moved !== undefined) error += ` (the group is now chat ${formatValue(moved)}; update config.chat_id)`;
  } else if (http.error) error = `telegram: ${http.error}`;
  else error = `telegram: unexpected answer (HTTP ${http.status ?? 'none'})`;
  const retryAfter = answer?.parameters?.retry_after;
  const retryAfterMs =
    typeof retryAfter === 'number' && retryAfter >= 0 ? Math.round(retryAfter * 1000) : http.retryAfterMs;
  const final = http.refused === true || [400, 401, 403, 404].includes(http.status ?? 0);
  return {
    ...base,
    ok: false,
    error: scrub(error),
    retryable: !final,
    ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}),
  };
}

const bad = (error: string): SendResult => ({
  ok: false,
  status_code: null,
  latency_ms: 0,
  response_excerpt: '',
  error,
  retryable: false,
});

/**
 * Telegram Bot API `sendMessage` in HTML mode through the guarded outbound client: the
 * destination's template (values HTML-escaped) or a default listing, cut to Telegram's limit.
 * The bot token is part of the URL only; it never reaches a result, a log line or an error.
 */
export const telegramAdapter: Adapter = async (deps, dest, msg, opts) => {
  const token = typeof dest.config.bot_token === 'string' ? dest.config.bot_token.trim() : '';
  const chatId = dest.config.chat_id;
  if (!token || (typeof chatId !== 'string' && typeof chatId !== 'number') || String(chatId).trim() === '') {
    return bad('the telegram destination needs config.bot_token and config.chat_id');
  }
  if (!TOKEN.test(token)) return bad('config.bot_token is not a Telegram bot token (digits, a colon, then letters)');
  const template = typeof dest.config.template === 'string' && dest.config.template ? dest.config.template : null;
  const ctx = msg.context;
  const text =
    msg.event === 'digest.ready'
      ? digestText(ctx, template)
      : template
        ? renderTemplate(template, templateScope(ctx), escapeHtml)
        : defaultText(ctx);
  const body = JSON.stringify({
    chat_id: String(chatId).trim(),
    text: cutHtml(text.trim() ? text : defaultText(ctx)),
    parse_mode: 'HTML',
    disable_web_page_preview: true,
  });
  const http = await deps.outbound.post(
    `${deps.config.telegramApiBase}/bot${token}/sendMessage`,
    body,
    { 'content-type': 'application/json' },
    { timeoutMs: opts?.timeoutMs ?? deps.config.webhookTimeoutMs },
  );
  return resultOf(http, scrubber(token));
};
