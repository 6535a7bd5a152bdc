import { isObj, type Obj } from '../../../shared/objects.js';
import type { MailMessage } from '../../mail.js';
import { escapeHtml, formatFields, renderTemplate, templateScope } from '../template.js';
import type { Adapter, OutboundMessage } from '../types.js';
import { mailFailure, sendMail } from './email.js';

export type Kind = 'autoresponder' | 'confirmation';

const oneLine = (s: string) =>
  s
    .replace(/[\r\n]+/g, ' ')
    .trim()
    .slice(0, 250);

/** The site the form was sent from (its Origin, else its Referer's), else this service's host. */
function siteOf(meta: Obj, base: string): string {
  for (const v of [meta.origin, meta.referer, base]) {
    if (typeof v !== 'string') continue;
    try {
      return new URL(v).host;
    } catch {}
  }
  return 'this site';
}

const DEFAULT_CONFIRM_SUBJECT = 'Please confirm: {{form.name}}';
const DEFAULT_CONFIRM_BODY = 'Please confirm that you sent the form "{{form.name}}".';

/** The text of the mail: the owner's message, the link (confirmation), the fields (when asked), why it came. */
function textOf(kind: Kind, own: Obj, msg: OutboundMessage, base: string): string {
  const ctx = msg.context;
  const scope = templateScope(ctx);
  const fallback = kind === 'confirmation' ? DEFAULT_CONFIRM_BODY : '';
  const body = renderTemplate(typeof own.body === 'string' ? own.body : fallback, scope).trim();
  const site = siteOf(ctx.meta, base);
  const parts = [body];
  if (kind === 'confirmation') {
    const until = typeof msg.payload.expires_at === 'string' ? `The link works until ${msg.payload.expires_at}.` : '';
    parts.push(`Confirm here (one click on the button of the page):\n${ctx.confirm_url ?? ''}\n${until}`.trim());
  }
  if (own.include_submission === true) parts.push(`What you sent:\n${formatFields(ctx.data)}`);
  const why =
    kind === 'confirmation'
      ? `You received this mail because this address was entered in the form "${ctx.form.name}" on ${site}. Nothing is passed on until you confirm; if it was not you, ignore this mail.`
      : `You received this mail because this address was entered in the form "${ctx.form.name}" on ${site}.`;
  parts.push(`--\n${why}`);
  return `${parts.filter(Boolean).join('\n\n')}\n`;
}

/** The HTML part: the text escaped as a whole (the owner's words and the submitter's values alike), the link a link. */
function htmlOf(text: string, link: string | undefined): string {
  let inner = escapeHtml(text).replace(/\n/g, '<br>');
  if (link) {
    const safe = escapeHtml(link);
    inner = inner.replace(safe, `<a href="${safe}">${safe}</a>`);
  }
  return `<!doctype html><html><body style="font-family:sans-serif;font-size:14px">${inner}</body></html>`;
}

/** Subject, bodies, Reply-To and From name of one submitter mail (the dashboard's preview renders it too). */
export function submitterMail(kind: Kind, own: Obj, msg: OutboundMessage, base: string) {
  const subjectTemplate = typeof own.subject === 'string' ? own.subject : DEFAULT_CONFIRM_SUBJECT;
  const subject =
    oneLine(renderTemplate(subjectTemplate, templateScope(msg.context))) || oneLine(msg.context.form.name);
  const text = textOf(kind, own, msg, base);
  return {
    subject,
    text,
    html: htmlOf(text, msg.context.confirm_url),
    replyTo: typeof own.reply_to === 'string' ? own.reply_to : undefined,
    fromName: typeof own.from_name === 'string' ? oneLine(own.from_name) || undefined : undefined,
  };
}

/**
 * Mail to the submitter (route_id names the kind): subject and body from the form's
 * `settings.autoresponder` or `settings.confirm` as they are when it is sent (a setting turned off
 * since sends nothing), the address planned at intake, a plain text and an escaped HTML part.
 */
export const submitterAdapter: Adapter = async (deps, _dest, msg) => {
  if (deps.mailer.transport === 'none')
    return mailFailure('mail sending is not configured (MAIL_TRANSPORT=none)', false);
  const kind: Kind = msg.payload.type === 'submitter.confirmation' ? 'confirmation' : 'autoresponder';
  const own = msg.context.form.settings[kind === 'confirmation' ? 'confirm' : 'autoresponder'];
  if (!isObj(own) || own.enabled !== true)
    return mailFailure(`the form's ${kind} was turned off before it was sent`, false);
  const to = typeof msg.payload.to === 'string' ? msg.payload.to : '';
  if (!to) return mailFailure('no address to send to', false);
  const mail: MailMessage = { to: [to], ...submitterMail(kind, own, msg, deps.config.publicBaseUrl) };
  return sendMail(deps.mailer, mail);
};
