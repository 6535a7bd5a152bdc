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

/** Slack's limits: blocks per message, characters of a header, of a section or context text. */
export const SLACK_LIMITS = { blocks: 50, header: 150, section: 3000, context: 2000, text: 3000 } as const;

const SLACK_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Slack's escaping of the three control characters: with them escaped, a value cannot write a
 * mention (`<!channel>`, `<@U…>`) or a link (`<https://…|label>`), whatever it holds. Its line
 * breaks are shown as ↵, and a leading `*`, `>`, `#`, `-`, `_`, `~` or backtick gets a zero-width
 * space before it (Slack has no escape for them), so it cannot open a quote, a list or emphasis
 * at the start of a line.
 */
export function escapeSlack(s: string): string {
  const flat = oneLine(s);
  const lead = /^[*>#\-_~`]/.test(flat) ? '\u200b' : '';
  return lead + flat.replace(/[&<>]/g, (c) => SLACK_ESCAPES[c]);
}

const header = (text: string) => ({
  type: 'header',
  text: { type: 'plain_text', text: cutText(text, SLACK_LIMITS.header), emoji: false },
});
const section = (text: string) => ({
  type: 'section',
  text: { type: 'mrkdwn', text: cutText(text, SLACK_LIMITS.section) },
});
const context = (text: string) => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: cutText(text, SLACK_LIMITS.context) }],
});

/** Sections within the block limit (`reserved` blocks kept for the rest), then "and N more". */
function capped(sections: Obj[], reserved: number, noun: string): Obj[] {
  const room = SLACK_LIMITS.blocks - reserved;
  if (sections.length <= room) return sections;
  return [...sections.slice(0, room - 1), context(moreText(sections.length - room + 1, noun))];
}

const fieldLine = ([name, value]: [string, string]) => `${name}: ${value}`;
const fieldSection = ([name, value]: [string, string]) => section(`*${name}*\n${value || '_(empty)_'}`);

/** The default text: the form name, then one "name: value" line per field, everything escaped. */
function defaultText(ctx: Ctx): string {
  const title = `New submission: ${escapeSlack(ctx.form.name)}`;
  const lines = escapedFields(ctx.data, escapeSlack).map(fieldLine);
  return listLines([title, ...(lines.length ? lines : ['(no fields)'])], SLACK_LIMITS.text, 'fields');
}

/** A submission: header with the form name, a section per field, a context line with its id and time. */
function submissionMessage(ctx: Ctx, template: string | null): Obj {
  const rendered = template ? renderTemplate(template, templateScope(ctx), escapeSlack) : '';
  const text = rendered.trim() ? cutText(rendered, SLACK_LIMITS.text) : defaultText(ctx);
  const fields = escapedFields(ctx.data, escapeSlack);
  const sections = fields.length ? fields.map(fieldSection) : [section('_(no fields)_')];
  const line = escapeSlack(submissionLine(ctx));
  const blocks = [
    header(escapeSlack(ctx.form.name)),
    ...capped(sections, 2, 'fields'),
    ...(line ? [context(line)] : []),
  ];
  return { text, blocks };
}

/** A digest: one message listing the period's submissions, cut to Slack's limits with "and N more". */
function digestMessage(ctx: Ctx, template: string | null): Obj {
  const title = escapeSlack(digestTitle(ctx));
  const items = digestItems(ctx).map((item) => {
    const scope = itemScope(ctx, item);
    const rendered = template ? renderTemplate(template, scope, escapeSlack).trim() : '';
    const when = escapeSlack(submissionLine({ ...ctx, submission: scope.submission as Obj, meta: scope.meta as Obj }));
    const fields = escapedFields(scope.data as Obj, escapeSlack).map(fieldLine);
    return { when, body: rendered || fields.join('\n') || '(no fields)' };
  });
  const text = listLines(
    [title, ...items.map((i) => `• ${i.when}: ${i.body.replace(/\n/g, ', ')}`)],
    SLACK_LIMITS.text,
    'submissions',
  );
  const sections = items.map((i) => section(`*${i.when}*\n${i.body}`));
  return { text, blocks: [header(title), ...capped(sections, 1, 'submissions')] };
}

/**
 * Slack incoming webhook: JSON `{text, blocks}` through the guarded outbound client. Every value
 * is escaped (the template's own text is not); Slack answers 200 with the body `ok`, and anything
 * else is a failure carrying Slack's text.
 */
export const slackAdapter: Adapter = postChat(
  'slack',
  'the incoming-webhook URL',
  (msg, template) =>
    msg.event === 'digest.ready' ? digestMessage(msg.context, template) : submissionMessage(msg.context, template),
  (http) => {
    const accepted = http.status === 200 && http.excerpt.trim() === 'ok';
    return chatResult('slack', http, accepted, (excerpt) => answerText(excerpt), http.retryAfterMs);
  },
);
