import type { MailMessage } from '../../mail.js';
import {
  digestItems,
  escapeHtml,
  fieldEntries,
  formatFields,
  formatValue,
  itemScope,
  renderTemplate,
  templateScope,
} from '../template.js';
import type { Adapter, AdapterDeps, OutboundMessage, SendResult } from '../types.js';

type Obj = Record<string, unknown>;
type Context = OutboundMessage['context'];

/**
 * An address fit for Reply-To: one mailbox, no display name, no CR/LF, commas or quotes
 * (so a submitter cannot add recipients or headers through a form field).
 */
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** The value as an email address, or null when it does not look like exactly one. */
export function asEmail(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = v.trim();
  return s.length <= 254 && EMAIL.test(s) ? s : null;
}

/** Reply-To: the field named by `settings.reply_to_field` when it holds an email, else the first that does. */
export function replyToOf(settings: Obj, data: Obj): string | undefined {
  const named = settings.reply_to_field;
  if (typeof named === 'string' && Object.hasOwn(data, named)) {
    const hit = asEmail(data[named]);
    if (hit) return hit;
  }
  for (const v of Object.values(data)) {
    const hit = asEmail(v);
    if (hit) return hit;
  }
  return undefined;
}

const oneLine = (s: string) =>
  s
    .replace(/[\r\n]+/g, ' ')
    .trim()
    .slice(0, 250);

function subjectOf(config: Obj, msg: OutboundMessage): string {
  const ctx = msg.context;
  if (msg.event === 'digest.ready') {
    const n = digestItems(ctx).length;
    return oneLine(`Digest: ${n} submission${n === 1 ? '' : 's'} to ${ctx.form.name}`);
  }
  if (typeof config.subject_template === 'string') {
    const rendered = oneLine(renderTemplate(config.subject_template, templateScope(ctx)));
    if (rendered) return rendered;
  }
  const hint = oneLine(ctx.subject_hint ?? '');
  return hint || oneLine(`New submission: ${ctx.form.name}`);
}

/** "Submission sb_… received 2024-…" (plus a test marker) under each listing. */
function footerOf(submission: Obj | null): string {
  if (!submission) return '';
  const parts = [`Submission ${formatValue(submission.id)}`];
  if (submission.received_at) parts.push(`received ${formatValue(submission.received_at)}`);
  return parts.join(' ') + (submission.test === true ? ' (test submission)' : '');
}

function htmlTable(data: Obj): string {
  const rows = fieldEntries(data).map(
    ([name, value]) =>
      `<tr><th align="left" valign="top" style="padding:4px 12px 4px 0">${escapeHtml(name)}</th>` +
      `<td style="padding:4px 0;white-space:pre-wrap">${escapeHtml(value)}</td></tr>`,
  );
  if (!rows.length) return '<p><i>(no fields)</i></p>';
  return `<table cellspacing="0" style="border-collapse:collapse">${rows.join('')}</table>`;
}

const htmlFooter = (text: string) => (text ? `<p style="color:#666;font-size:12px">${escapeHtml(text)}</p>` : '');

const htmlPage = (title: string, inner: string) =>
  `<!doctype html><html><body style="font-family:sans-serif;font-size:14px">` +
  `<h2 style="font-size:16px">${escapeHtml(title)}</h2>${inner}</body></html>`;

/** Text and HTML bodies of one submission: its fields, then which submission it was. */
function singleBodies(ctx: Context): { text: string; html: string } {
  const title = `New submission: ${ctx.form.name}`;
  const footer = footerOf(ctx.submission);
  return {
    text: `${title}\n\n${formatFields(ctx.data)}\n${footer ? `\n--\n${footer}\n` : ''}`,
    html: htmlPage(title, htmlTable(ctx.data) + htmlFooter(footer)),
  };
}

/** Text and HTML bodies of a digest: one section per listed submission. */
function digestBodies(ctx: Context, subject: string, truncated: boolean): { text: string; html: string } {
  const items = digestItems(ctx).map((item) => itemScope(ctx, item));
  const more = truncated ? 'More submissions arrived in this period than a digest lists.' : '';
  const text = [
    subject,
    ...items.map((s) => `--\n${footerOf(s.submission as Obj)}\n\n${formatFields(s.data as Obj)}`),
    ...(more ? [more] : []),
  ].join('\n\n');
  const html = htmlPage(
    subject,
    items
      .map(
        (s) =>
          `<h3 style="font-size:14px">${escapeHtml(footerOf(s.submission as Obj))}</h3>${htmlTable(s.data as Obj)}`,
      )
      .join('<hr>') + (more ? `<p><i>${escapeHtml(more)}</i></p>` : ''),
  );
  return { text: `${text}\n`, html };
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s.trim() !== '') : [];

/** A mail that was not sent: the SendResult every mail adapter answers with. */
export const mailFailure = (error: string, retryable: boolean, latency = 0): SendResult => ({
  ok: false,
  status_code: null,
  latency_ms: latency,
  response_excerpt: '',
  error,
  retryable,
});

/**
 * Email through the server's mailer (nodemailer to SMTP_URL): subject from the destination's
 * template, the submission's `_subject` or a default; Reply-To the submitter; text and HTML bodies
 * listing the fields. SMTP failures are retryable; a server without mail is not.
 */
export const emailAdapter: Adapter = async (deps, dest, msg) => {
  if (deps.mailer.transport === 'none')
    return mailFailure('mail sending is not configured (MAIL_TRANSPORT=none)', false);
  const to = strings(dest.config.to);
  if (!to.length) return mailFailure('the email destination has no recipients (config.to)', false);
  const ctx = msg.context;
  const digest = msg.event === 'digest.ready';
  const subject = subjectOf(dest.config, msg);
  const bodies = digest ? digestBodies(ctx, subject, msg.payload.truncated === true) : singleBodies(ctx);
  const mail: MailMessage = {
    to,
    cc: strings(dest.config.cc),
    subject,
    text: bodies.text,
    html: bodies.html,
    replyTo: digest ? undefined : replyToOf(ctx.form.settings ?? {}, ctx.data),
    fromName: typeof dest.config.from_name === 'string' ? oneLine(dest.config.from_name) || undefined : undefined,
  };
  return sendMail(deps.mailer, mail);
};

/** Sends one mail and answers its SendResult: SMTP failures are retryable, with the server's words. */
export async function sendMail(mailer: Pick<AdapterDeps['mailer'], 'send'>, mail: MailMessage): Promise<SendResult> {
  const started = performance.now();
  const result = await mailer.send(mail);
  const latency = Math.round(performance.now() - started);
  const response_excerpt = (result.response ?? '').slice(0, 500);
  if (!result.ok) return { ...mailFailure(result.error ?? 'the mail was not sent', true, latency), response_excerpt };
  return { ok: true, status_code: null, latency_ms: latency, response_excerpt, error: null, retryable: true };
}
