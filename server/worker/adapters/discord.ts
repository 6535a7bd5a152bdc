import { digestItems, itemScope, renderTemplate, templateScope } from '../template.js';
import type { Adapter, OutboundMessage } from '../types.js';
import {
  answerText,
  chatResult,
  cutText,
  digestTitle,
  escapedFields,
  listLines,
  moreText,
  oneLine,
  postChat,
  submissionLine,
} from './chat.js';

type Obj = Record<string, unknown>;
type Ctx = OutboundMessage['context'];
type Field = { name: string; value: string; inline: false };

/** Discord's limits: content, embed title, footer, fields per embed, field name and value, an embed in all. */
export const DISCORD_LIMITS = {
  content: 2000,
  title: 256,
  footer: 2048,
  fields: 25,
  name: 256,
  value: 1024,
  embed: 6000,
} as const;

/**
 * Backslash-escapes Discord markdown in a value, so a submission cannot forge a masked link
 * (`[label](url)`), a mention-looking `<@…>`, a spoiler or formatting. Mentions are also switched
 * off by `allowed_mentions`, so `@everyone` in a value pings nobody.
 */
export function escapeDiscord(s: string): string {
  // Line breaks shown as ↵, and a leading list marker escaped too (`*`, `>` and `#` always are), so
  // a value cannot start a line, a heading, a quote or a list item of its own.
  return oneLine(s)
    .replace(/[\\*_~`|<>#[\]()]/g, '\\$&')
    .replace(/^[-+]/, '\\$&');
}

const field = (name: string, value: string): Field => ({
  name: cutText(name || '(unnamed)', DISCORD_LIMITS.name),
  value: cutText(value || '(empty)', DISCORD_LIMITS.value),
  inline: false,
});

/**
 * Fields within Discord's limits: at most 25, and the embed's 6000 characters (`used` already
 * spent on title and footer); what does not fit is named by a last "… and N more" field. A value
 * is cut to the room left rather than dropped when at least a little fits.
 */
export function fitFields(all: [string, string][], used: number, noun: string): Field[] {
  const out: Field[] = [];
  const reserve = 60; // the "and N more" field
  let spent = used;
  for (let i = 0; i < all.length; i++) {
    const last = out.length === DISCORD_LIMITS.fields - 1;
    if (last && all.length - i > 1) break;
    let f = field(all[i][0], all[i][1]);
    const room = DISCORD_LIMITS.embed - reserve - spent - f.name.length;
    if (f.value.length > room) {
      if (room < 20) break;
      f = { ...f, value: cutText(f.value, room) };
    }
    out.push(f);
    spent += f.name.length + f.value.length;
  }
  const rest = all.length - out.length;
  if (rest > 0) out.push(field('…', moreText(rest, noun).replace(/^… /, '')));
  return out;
}

/** The default content: the form name in bold, then one "name: value" line per field. */
function defaultContent(ctx: Ctx): string {
  const lines = escapedFields(ctx.data, escapeDiscord).map(([n, v]) => `${n}: ${v}`);
  const title = `**New submission: ${escapeDiscord(ctx.form.name)}**`;
  return listLines([title, ...(lines.length ? lines : ['(no fields)'])], DISCORD_LIMITS.content, 'fields');
}

function embedOf(title: string, fields: [string, string][], footer: string, noun: string, at?: unknown): Obj {
  const t = cutText(title, DISCORD_LIMITS.title);
  const f = cutText(footer, DISCORD_LIMITS.footer);
  const when = typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? { timestamp: at } : {};
  return {
    title: t,
    fields: fitFields(fields, t.length + f.length, noun),
    ...(f ? { footer: { text: f } } : {}),
    ...when,
  };
}

function submissionMessage(ctx: Ctx, template: string | null): Obj {
  const rendered = template ? renderTemplate(template, templateScope(ctx), escapeDiscord) : '';
  const content = rendered.trim() ? cutText(rendered, DISCORD_LIMITS.content) : defaultContent(ctx);
  const fields = escapedFields(ctx.data, escapeDiscord);
  const at = ctx.submission?.received_at ?? ctx.meta.received_at;
  return { content, embeds: [embedOf(ctx.form.name, fields, submissionLine(ctx), 'fields', at)] };
}

/** A digest: one message, a field per submission, cut to Discord's limits with "and N more". */
function digestMessage(ctx: Ctx, template: string | null): Obj {
  const items = digestItems(ctx).map((item): [string, string] => {
    const scope = itemScope(ctx, item);
    const rendered = template ? renderTemplate(template, scope, escapeDiscord).trim() : '';
    const lines = escapedFields(scope.data as Obj, escapeDiscord).map(([n, v]) => `${n}: ${v}`);
    const when = submissionLine({ ...ctx, submission: scope.submission as Obj, meta: scope.meta as Obj });
    return [when, rendered || listLines(lines, DISCORD_LIMITS.value, 'fields') || '(no fields)'];
  });
  const title = digestTitle(ctx);
  const content = listLines(
    [`**${escapeDiscord(title)}**`, ...items.map(([w, b]) => `${w}: ${b.replace(/\n/g, ', ')}`)],
    DISCORD_LIMITS.content,
    'submissions',
  );
  return { content, embeds: [embedOf(title, items, '', 'submissions')] };
}

interface DiscordAnswer {
  message?: unknown;
  retry_after?: unknown;
}

function parseAnswer(excerpt: string): DiscordAnswer | null {
  try {
    const v = JSON.parse(excerpt);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as DiscordAnswer) : null;
  } catch {
    return null;
  }
}

/**
 * Discord webhook: JSON `{content, embeds: [one embed], allowed_mentions: {parse: []}}` through the
 * guarded outbound client. 200 and 204 are sent; a 429 waits what the body's `retry_after`
 * (seconds) or the Retry-After header asks.
 */
export const discordAdapter: Adapter = postChat(
  'discord',
  'the webhook URL',
  (msg, template) => ({
    ...(msg.event === 'digest.ready' ? digestMessage(msg.context, template) : submissionMessage(msg.context, template)),
    allowed_mentions: { parse: [] },
  }),
  (http) => {
    const answer = parseAnswer(http.excerpt);
    const bodyWait = answer?.retry_after;
    const retryAfterMs =
      http.status === 429 && typeof bodyWait === 'number' && bodyWait >= 0
        ? Math.ceil(bodyWait * 1000)
        : http.retryAfterMs;
    const detail = (excerpt: string) =>
      typeof answer?.message === 'string' ? answerText(answer.message) : answerText(excerpt);
    return chatResult('discord', http, http.status === 200 || http.status === 204, detail, retryAfterMs);
  },
);
