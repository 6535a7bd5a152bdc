import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { SCHEMA_MODES } from '../../../../shared/contracts/forms.js';
import type { DashEnv } from '../../env.js';
import { CsrfField, ErrorBox } from '../../render.js';
import { ariaOf, type Failure, FieldError, formPath, type Issue, issuesAt, unclaimed } from '../forms-ui.js';
import { AutoresponderFields, ConfirmFields } from './submitter-fields.js';

type Values = Record<string, string>;

/** The field and its error message ids, and the aria attributes that tie them to the field's input. */
const marks = (issues: Issue[]) => ({
  at: (p: string) => issuesAt(issues, p),
  aria: (path: string, errId: string, helpId?: string) => ariaOf(issuesAt(issues, path), errId, helpId),
});

const CLAIMED = [
  'name',
  'tags',
  'status',
  'schema_mode',
  'settings.allowed_origins',
  'settings.rate_limit',
  'settings.honeypot_field',
  'settings.redirect_url',
  'settings.reply_to_field',
  'settings.challenge',
  'settings.autoresponder',
  'settings.confirm',
];

/** The settings form (PATCH /v1/forms/{id}): each field with its errors next to it after a refusal. */
export const SettingsForm: FC<{ c: Context<DashEnv>; formId: string; values: Values; failure?: Failure }> = ({
  c,
  formId,
  values: v,
  failure,
}) => {
  const issues = failure?.issues ?? [];
  const { at, aria } = marks(issues);
  return (
    <section class="card" aria-labelledby="settings">
      <h2 id="settings">Settings</h2>
      {failure ? <ErrorBox message={failure.message} hint={failure.hint} fields={unclaimed(issues, CLAIMED)} /> : null}
      <form method="post" action={`${formPath(formId)}/settings`}>
        <CsrfField c={c} />
        <label for="s-name">Name</label>
        <input
          id="s-name"
          name="name"
          type="text"
          required
          maxlength={200}
          value={v.name}
          {...aria('name', 's-name-err')}
        />
        <FieldError id="s-name-err" issues={at('name')} />

        <label for="s-tags">
          Tags <span class="help">(separated by commas)</span>
        </label>
        <input id="s-tags" name="tags" type="text" value={v.tags} {...aria('tags', 's-tags-err')} />
        <FieldError id="s-tags-err" issues={at('tags')} />

        <ModeFields v={v} issues={issues} />

        <label for="s-origins">Allowed origins</label>
        <textarea
          id="s-origins"
          name="allowed_origins"
          rows={3}
          {...aria('settings.allowed_origins', 's-origins-err', 's-origins-help')}
        >
          {v.allowed_origins}
        </textarea>
        <p id="s-origins-help" class="help">
          One per line, e.g. https://example.com. Empty: any site may post. A post from another origin is quarantined.
        </p>
        <FieldError id="s-origins-err" issues={at('settings.allowed_origins')} />

        <RateLimitFields v={v} issues={issues} />

        <IntakeFields v={v} issues={issues} />

        <ChallengeFields v={v} issues={issues} />

        <AutoresponderFields v={v} issues={issues} />

        <ConfirmFields v={v} issues={issues} />

        <p>
          <button type="submit">Save settings</button>
        </p>
      </form>
    </section>
  );
};

const RateLimitFields: FC<{ v: Values; issues: Issue[] }> = ({ v, issues }) => {
  const { at, aria } = marks(issues);
  return (
    <fieldset>
      <legend>Rate limit per client IP</legend>
      <p class="help">Leave both empty for no limit.</p>
      <div class="row">
        <div>
          <label for="s-rate-max">At most (submissions)</label>
          <input
            id="s-rate-max"
            name="rate_max"
            type="text"
            inputmode="numeric"
            value={v.rate_max}
            {...aria('settings.rate_limit.max', 's-rate-max-err')}
          />
          <FieldError id="s-rate-max-err" issues={at('settings.rate_limit.max')} />
        </div>
        <div>
          <label for="s-rate-window">In (seconds)</label>
          <input
            id="s-rate-window"
            name="rate_window"
            type="text"
            inputmode="numeric"
            value={v.rate_window}
            {...aria('settings.rate_limit.window_s', 's-rate-window-err')}
          />
          <FieldError id="s-rate-window-err" issues={at('settings.rate_limit.window_s')} />
        </div>
      </div>
      <FieldError
        id="s-rate-err"
        issues={issuesAt(issues, 'settings.rate_limit').filter(
          (i) => i.path !== 'settings.rate_limit.max' && i.path !== 'settings.rate_limit.window_s',
        )}
      />
    </fieldset>
  );
};

/** Honeypot, redirect and reply-to: what intake and the notification mail use. */
const IntakeFields: FC<{ v: Values; issues: Issue[] }> = ({ v, issues }) => {
  const { at, aria } = marks(issues);
  return (
    <>
      <label for="s-honeypot">Honeypot field</label>
      <input
        id="s-honeypot"
        name="honeypot_field"
        type="text"
        placeholder="_gotcha"
        value={v.honeypot_field}
        {...aria('settings.honeypot_field', 's-honeypot-err', 's-honeypot-help')}
      />
      <p id="s-honeypot-help" class="help">
        A hidden field bots fill in; a submission with it filled is spam. Empty keeps the current one (default _gotcha).
      </p>
      <FieldError id="s-honeypot-err" issues={at('settings.honeypot_field')} />

      <label for="s-redirect">Redirect URL</label>
      <input
        id="s-redirect"
        name="redirect_url"
        type="text"
        inputmode="url"
        placeholder="https://example.com/thanks"
        value={v.redirect_url}
        {...aria('settings.redirect_url', 's-redirect-err', 's-redirect-help')}
      />
      <p id="s-redirect-help" class="help">
        Where a browser goes after posting the HTML form. Empty: formsvc’s own thank-you page.
      </p>
      <FieldError id="s-redirect-err" issues={at('settings.redirect_url')} />

      <label for="s-replyto">Reply-to field</label>
      <input
        id="s-replyto"
        name="reply_to_field"
        type="text"
        placeholder="email"
        value={v.reply_to_field}
        {...aria('settings.reply_to_field', 's-replyto-err', 's-replyto-help')}
      />
      <p id="s-replyto-help" class="help">
        The field whose email address becomes Reply-To in notification emails. Empty: the first field that holds an
        email address.
      </p>
      <FieldError id="s-replyto-err" issues={at('settings.reply_to_field')} />
    </>
  );
};

/**
 * The bot challenge: none or formsvc's proof of work, with its difficulty. Turnstile (its keys are
 * set through the API) is shown and kept while it is the form's choice.
 */
const ChallengeFields: FC<{ v: Values; issues: Issue[] }> = ({ v, issues }) => {
  const { at, aria } = marks(issues);
  return (
    <>
      <label for="s-challenge">Bot challenge</label>
      <select id="s-challenge" name="challenge" {...aria('settings.challenge', 's-challenge-err', 's-challenge-help')}>
        <option value="" selected={!v.challenge}>
          None
        </option>
        <option value="pow" selected={v.challenge === 'pow'}>
          Proof of work
        </option>
        {v.challenge === 'turnstile' ? (
          <option value="turnstile" selected>
            Turnstile (keys set through the API)
          </option>
        ) : null}
      </select>
      <p id="s-challenge-help" class="help">
        Proof of work: formsvc's own widget makes the visitor's browser work about half a second before sending; a post
        without the work is quarantined (challenge failed). The hosted page and the HTML snippet include the widget.
      </p>
      <FieldError
        id="s-challenge-err"
        issues={issuesAt(issues, 'settings.challenge').filter((i) => !/difficulty/.test(i.path))}
      />

      <label for="s-difficulty">Proof-of-work difficulty</label>
      <input
        id="s-difficulty"
        name="challenge_difficulty"
        type="text"
        inputmode="numeric"
        placeholder="1000"
        value={v.challenge_difficulty}
        {...aria('settings.challenge.difficulty', 's-difficulty-err', 's-difficulty-help')}
      />
      <p id="s-difficulty-help" class="help">
        The average number of tries (1 to 100000). Empty: 1000, about half a second of a phone.
      </p>
      <FieldError id="s-difficulty-err" issues={at('settings.challenge.difficulty')} />
    </>
  );
};

/** Schema mode, and the paused switch. */
const ModeFields: FC<{ v: Values; issues: Issue[] }> = ({ v, issues }) => {
  const { at, aria } = marks(issues);
  return (
    <>
      <label for="s-mode">Schema mode</label>
      <select id="s-mode" name="schema_mode" {...aria('schema_mode', 's-mode-err')}>
        {SCHEMA_MODES.map((m) => (
          <option value={m} selected={v.schema_mode === m}>
            {m}
          </option>
        ))}
      </select>
      <FieldError id="s-mode-err" issues={at('schema_mode')} />

      <label for="s-paused">
        <input
          id="s-paused"
          name="paused"
          type="checkbox"
          checked={Boolean(v.paused)}
          aria-describedby="s-paused-help"
        />{' '}
        Paused
      </label>
      <p id="s-paused-help" class="help">
        A paused form still stores its submissions but sends them nowhere (no deliveries) until you clear this box.
      </p>
    </>
  );
};
