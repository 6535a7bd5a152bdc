import { isObj } from '../../../../shared/objects.js';
import { numberField } from '../forms-ui.js';

type Values = Record<string, string>;

/** A text field: trimmed, or left out when empty (an optional key that is absent is not set). */
const opt = (key: string, s: string | undefined) => {
  const t = (s ?? '').trim();
  return t ? { [key]: t } : {};
};

/** A textarea's text with the browser's CRLF line ends made LF, as the API's own clients send it. */
const text = (s: string | undefined) => (s ?? '').replace(/\r\n?/g, '\n');

/**
 * `settings.autoresponder` and `settings.confirm` as the settings form sent them (docs/submitter.md):
 * each replaced as a whole (an empty optional field is left out, so it clears), removed (null) when
 * its box is clear and nothing is typed, and left as stored when the post has none of its fields.
 * Subject and body are sent even when empty, so the API's 422 names them next to their fields.
 */
export function submitterSettingsOf(f: Values) {
  return { ...autoresponderOf(f), ...confirmOf(f) };
}

function autoresponderOf(f: Values) {
  if (f.ar_subject === undefined && f.ar_body === undefined && f.ar_enabled === undefined) return {};
  const typed = ['ar_subject', 'ar_body', 'ar_email_field', 'ar_reply_to', 'ar_from_name'].some((k) => f[k]?.trim());
  if (!f.ar_enabled && !typed) return { autoresponder: null };
  return {
    autoresponder: {
      enabled: Boolean(f.ar_enabled),
      subject: (f.ar_subject ?? '').trim(),
      body: text(f.ar_body),
      ...opt('email_field', f.ar_email_field),
      ...opt('reply_to', f.ar_reply_to),
      ...opt('from_name', f.ar_from_name),
      ...(f.ar_include ? { include_submission: true } : {}),
    },
  };
}

function confirmOf(f: Values) {
  if (f.co_subject === undefined && f.co_body === undefined && f.co_enabled === undefined) return {};
  const typed = ['co_subject', 'co_body', 'co_email_field', 'co_expires'].some((k) => f[k]?.trim());
  if (!f.co_enabled && !typed) return { confirm: null };
  const expires = numberField(f.co_expires);
  const body = text(f.co_body);
  return {
    confirm: {
      enabled: Boolean(f.co_enabled),
      ...opt('email_field', f.co_email_field),
      ...opt('subject', f.co_subject),
      ...(body.trim() ? { body } : {}),
      ...(expires === undefined ? {} : { expires_hours: expires }),
    },
  };
}

/** The settings form's values of both, as the form has them now. */
export function submitterValuesOf(settings: Record<string, unknown>): Values {
  const ar = isObj(settings.autoresponder) ? settings.autoresponder : {};
  const co = isObj(settings.confirm) ? settings.confirm : {};
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    ar_enabled: ar.enabled === true ? 'on' : '',
    ar_email_field: str(ar.email_field),
    ar_subject: str(ar.subject),
    ar_body: str(ar.body),
    ar_reply_to: str(ar.reply_to),
    ar_from_name: str(ar.from_name),
    ar_include: ar.include_submission === true ? 'on' : '',
    co_enabled: co.enabled === true ? 'on' : '',
    co_email_field: str(co.email_field),
    co_subject: str(co.subject),
    co_body: str(co.body),
    co_expires: typeof co.expires_hours === 'number' ? String(co.expires_hours) : '',
  };
}
