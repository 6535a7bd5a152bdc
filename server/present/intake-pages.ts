/**
 * The pages a visitor's browser sees after an HTML form post: thanks, "please check your answers"
 * (a schema_violation), and the answers intake decides itself (a foreign origin, too many posts).
 * Escaped text only; the one script is the "go back" link, which keeps what the visitor typed.
 */

import { humanize } from '../schemas/infer.js';
import type { SchemaIssue } from '../schemas/validate.js';
import { escapeHtml } from './html.js';

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head><body><main>${body}<p><a href="javascript:history.back()">Go back</a></p></main></body></html>`;
}

export function thanksPage(formName: string): string {
  const name = escapeHtml(formName);
  return page(
    `Thank you · ${formName}`,
    `<h1>Thank you!</h1><p>Your submission to <strong>${name}</strong> was received.</p>`,
  );
}

const FORMATS: Record<string, string> = {
  email: 'an email address',
  uri: 'a URL (https://…)',
  date: 'a date',
  'date-time': 'a date and time',
};

/** The validator's message in a visitor's words, where there are better ones. */
export function say(message: string): string {
  if (message.startsWith('must have required property')) return 'is required';
  if (message === 'must be integer') return 'must be a whole number';
  if (message === 'must be number') return 'must be a number';
  if (message === 'must be boolean') return 'must be ticked or left blank';
  if (message === 'must be equal to one of the allowed values') return 'must be one of the choices';
  const format = /^must match format "([^"]+)"$/.exec(message)?.[1];
  if (format && Object.hasOwn(FORMATS, format)) return `must be ${FORMATS[format]}`;
  return message;
}

/** The label a field has in the form: its ui hint, else its humanized name. */
function labelOf(field: string, ui: unknown): string {
  const hint = ui && typeof ui === 'object' && Object.hasOwn(ui, field) ? (ui as Record<string, unknown>)[field] : null;
  const label = hint && typeof hint === 'object' ? (hint as Record<string, unknown>).label : undefined;
  return typeof label === 'string' && label ? label : humanize(field);
}

/**
 * 422 for an HTML post quarantined as schema_violation: each field to fix, by its label and name.
 * The submission is kept; the visitor goes back, fixes and sends again.
 */
export function fixAnswersPage(formName: string, issues: SchemaIssue[], ui: unknown): string {
  const items = issues.map((i) => {
    if (i.path.startsWith('(')) return `<li>${escapeHtml(say(i.message))}</li>`;
    const [field, ...rest] = i.path.split('.');
    const label = labelOf(field, ui);
    // The name too where the label does not say it: a ui label, a nested path.
    const name = rest.length ? i.path : label === humanize(field) ? '' : field;
    const where = name ? ` (${escapeHtml(name)})` : '';
    return `<li><strong>${escapeHtml(label)}</strong>${where}: ${escapeHtml(say(i.message))}</li>`;
  });
  return page(
    `Please check your answers · ${formName}`,
    `<h1>Please check your answers</h1><p>Your submission to <strong>${escapeHtml(formName)}</strong> was kept, but it cannot be accepted as it is. Please fix ${issues.length === 1 ? 'this field' : 'these fields'} and send it again:</p><ul>${items.join('')}</ul>`,
  );
}

/** 403 for an HTML post from a website the form does not list in allowed_origins. */
export function originRejectedPage(formName: string, origin: string): string {
  return page(
    `Not sent · ${formName}`,
    `<h1>This form does not accept posts from this website</h1><p>Your submission to <strong>${escapeHtml(formName)}</strong> was kept, but <code>${escapeHtml(origin)}</code> is not one of the websites this form accepts. Please let the site's owner know.</p>`,
  );
}

/** An HTML post repeating values settings.unique already received (stored quarantined, reason duplicate). */
export function alreadyReceivedPage(formName: string): string {
  return page(
    `Already received · ${formName}`,
    `<h1>Already received</h1><p>A submission with these details was already received by <strong>${escapeHtml(formName)}</strong>. This form takes one per person, so there is no need to send it again.</p>`,
  );
}

/** 429 for an HTML post over the form's rate limit. */
export function rateLimitedPage(formName: string, retryAfterS: number): string {
  return page(
    `Too many submissions · ${formName}`,
    `<h1>Too many submissions</h1><p>Your submission to <strong>${escapeHtml(formName)}</strong> was kept, but this address has sent too many in a short time. Please wait ${retryAfterS} seconds before sending again.</p>`,
  );
}
