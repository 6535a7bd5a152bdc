import type { FC } from 'hono/jsx';
import { ariaOf, FieldError, type Issue, issuesAt } from '../forms-ui.js';

type Values = Record<string, string>;

/** One labelled text input (or textarea) of a submitter setting, its help, and the API's messages about it. */
const Text: FC<{
  id: string;
  name: string;
  label: string;
  path: string;
  v: Values;
  issues: Issue[];
  help?: string;
  placeholder?: string;
  area?: boolean;
  numeric?: boolean;
}> = ({ id, name, label, path, v, issues, help, placeholder, area, numeric }) => {
  const at = issuesAt(issues, path);
  const aria = ariaOf(at, `${id}-err`, help ? `${id}-help` : undefined);
  return (
    <>
      <label for={id}>{label}</label>
      {area ? (
        <textarea id={id} name={name} rows={5} placeholder={placeholder} {...aria}>
          {v[name]}
        </textarea>
      ) : (
        <input
          id={id}
          name={name}
          type="text"
          inputmode={numeric ? 'numeric' : undefined}
          placeholder={placeholder}
          value={v[name]}
          {...aria}
        />
      )}
      {help ? (
        <p id={`${id}-help`} class="help">
          {help}
        </p>
      ) : null}
      <FieldError id={`${id}-err`} issues={at} />
    </>
  );
};

/** A setting's "on" box; its messages (the whole setting's, e.g. a wrong type) sit under it. */
const Enabled: FC<{ id: string; name: string; label: string; path: string; v: Values; issues: Issue[] }> = (p) => {
  const own = p.issues.filter((i) => i.path === p.path || i.path === `${p.path}.enabled`);
  return (
    <>
      <label for={p.id}>
        <input id={p.id} name={p.name} type="checkbox" checked={Boolean(p.v[p.name])} {...ariaOf(own, `${p.id}-err`)} />{' '}
        {p.label}
      </label>
      <FieldError id={`${p.id}-err`} issues={own} />
    </>
  );
};

const PLACEHOLDERS = 'Placeholders: {{data.field}}, {{form.name}}, {{submission.id}}, {{meta.origin}}.';

/**
 * `settings.autoresponder` (docs/submitter.md): mail to whoever submitted a received submission. The
 * preview card below the form shows it as saved.
 */
export const AutoresponderFields: FC<{ v: Values; issues: Issue[] }> = ({ v, issues }) => {
  const p = 'settings.autoresponder';
  const common = { v, issues };
  return (
    <fieldset>
      <legend>Autoresponder (mail to the submitter)</legend>
      <p class="help">
        A “we got your message” mail to the address in the submission, for received submissions only (never spam), at
        most one per address a day. Clear the box and the fields to remove it.
      </p>
      <Enabled id="s-ar-enabled" name="ar_enabled" label="Send an autoresponse" path={p} {...common} />
      <Text id="s-ar-subject" name="ar_subject" label="Subject" path={`${p}.subject`} {...common} />
      <Text id="s-ar-body" name="ar_body" label="Message" path={`${p}.body`} area help={PLACEHOLDERS} {...common} />
      <Text
        id="s-ar-email"
        name="ar_email_field"
        label="Email field"
        path={`${p}.email_field`}
        placeholder="email"
        help="The field holding the address. Empty: the reply-to field, else the first field that holds an email address."
        {...common}
      />
      <Text
        id="s-ar-replyto"
        name="ar_reply_to"
        label="Reply-To address"
        path={`${p}.reply_to`}
        placeholder="team@example.com"
        {...common}
      />
      <Text id="s-ar-from" name="ar_from_name" label="From name" path={`${p}.from_name`} {...common} />
      <Enabled
        id="s-ar-include"
        name="ar_include"
        label="List the submitted fields under the message"
        path={`${p}.include_submission`}
        {...common}
      />
    </fieldset>
  );
};

/** `settings.confirm` (docs/submitter.md): double opt-in, nothing passed on until the submitter confirms. */
export const ConfirmFields: FC<{ v: Values; issues: Issue[] }> = ({ v, issues }) => {
  const p = 'settings.confirm';
  const common = { v, issues };
  return (
    <fieldset>
      <legend>Double opt-in</legend>
      <p class="help">
        A received submission is held (quarantined, pending confirmation) until the submitter presses the button behind
        a mailed link; then it is received and its deliveries are sent.
      </p>
      <Enabled id="s-co-enabled" name="co_enabled" label="Ask the submitter to confirm" path={p} {...common} />
      <Text
        id="s-co-subject"
        name="co_subject"
        label="Subject"
        path={`${p}.subject`}
        placeholder="Please confirm: {{form.name}}"
        {...common}
      />
      <Text
        id="s-co-body"
        name="co_body"
        label="Message above the link"
        path={`${p}.body`}
        area
        help={`Empty: the default words. The link and why the mail came are always added. ${PLACEHOLDERS}`}
        {...common}
      />
      <Text
        id="s-co-email"
        name="co_email_field"
        label="Email field"
        path={`${p}.email_field`}
        placeholder="email"
        {...common}
      />
      <Text
        id="s-co-expires"
        name="co_expires"
        label="Link expires after (hours)"
        path={`${p}.expires_hours`}
        placeholder="168"
        numeric
        help="1 to 8760. Empty: 168 (a week). Unconfirmed submissions are deleted a day after that."
        {...common}
      />
    </fieldset>
  );
};
