import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { DESTINATION_TYPES, type DestinationType } from '../../../shared/contracts/destinations.js';
import { ApiError } from '../../core/errors.js';
import { newWebhookSecret } from '../../services/webhook-secret.js';
import type { DashEnv } from '../env.js';
import { CsrfField } from '../render.js';
import type { Issue } from './forms-ui.js';
import { Check, Field, type Values } from './routing-ui.js';

/** The create forms of /app/destinations/new: one per type, each posting its own fields. */

export const TYPE_LABELS: Record<DestinationType, string> = {
  email: 'Email',
  telegram: 'Telegram',
  webhook: 'Webhook',
  slack: 'Slack',
  discord: 'Discord',
};

export const isType = (t: string | undefined): t is DestinationType =>
  (DESTINATION_TYPES as readonly string[]).includes(t ?? '');

/** "a@x, b@y" or one per line → ["a@x", "b@y"]. */
const list = (s: string | undefined) =>
  (s ?? '')
    .split(/[\s,;]+/)
    .map((x) => x.trim())
    .filter(Boolean);

const opt = (s: string | undefined) => (s?.trim() ? s.trim() : undefined);

/** "Name: value" lines → a header map; a line without a colon is a field error. */
function headerMap(text: string | undefined): Record<string, string> | undefined {
  const lines = (text ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (!lines.length) return undefined;
  const out: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at <= 0) {
      throw new ApiError('validation_failed', 'Some fields are not valid.', {
        details: { issues: [{ path: 'config.headers', message: `"${line}" is not "Name: value"` }] },
      });
    }
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/**
 * The form's fields as the JSON body of POST /v1/destinations (validated afterwards with the same
 * schema). A webhook set to sign without a secret of its own gets a generated one (`generated`).
 */
export function destinationBody(type: DestinationType, v: Values): { body: unknown; secret?: string } {
  const name = v.name?.trim() ?? '';
  switch (type) {
    case 'email':
      return {
        body: {
          type,
          name,
          config: {
            to: list(v.to),
            ...(list(v.cc).length ? { cc: list(v.cc) } : {}),
            ...(opt(v.subject_template) ? { subject_template: opt(v.subject_template) } : {}),
            ...(opt(v.from_name) ? { from_name: opt(v.from_name) } : {}),
          },
        },
      };
    case 'telegram':
      return {
        body: {
          type,
          name,
          config: {
            bot_token: v.bot_token?.trim() ?? '',
            chat_id: v.chat_id?.trim() ?? '',
            ...(opt(v.template) ? { template: opt(v.template) } : {}),
          },
        },
      };
    case 'webhook': {
      const secret = v.sign === 'on' ? (opt(v.secret) ?? newWebhookSecret()) : undefined;
      const headers = headerMap(v.headers);
      return {
        body: {
          type,
          name,
          config: { url: v.url?.trim() ?? '', ...(secret ? { secret } : {}), ...(headers ? { headers } : {}) },
        },
        secret,
      };
    }
    default:
      return {
        body: {
          type,
          name,
          config: { url: v.url?.trim() ?? '', ...(opt(v.template) ? { template: opt(v.template) } : {}) },
        },
      };
  }
}

type FormProps = { c: Context<DashEnv>; type: DestinationType; values: Values; issues?: Issue[] };

/** The fields each type's contract needs (shared/contracts/destinations.ts). */
const TypeFields: FC<{ type: DestinationType; values: Values; issues?: Issue[] }> = ({ type, values, issues }) => {
  const id = (n: string) => `${type}-${n}`;
  const f = (name: string, label: string, extra: Record<string, unknown> = {}) => (
    <Field
      id={id(name)}
      name={name}
      label={label}
      value={values[name]}
      path={`config.${name}`}
      issues={issues}
      {...extra}
    />
  );
  switch (type) {
    case 'email':
      return (
        <>
          {f('to', 'Send to', { required: true, help: 'One or more addresses, separated by commas.', type: 'text' })}
          {f('cc', 'Copy to (optional)', { help: 'Addresses separated by commas.' })}
          {f('subject_template', 'Subject template (optional)', {
            help: 'Leave empty for the default subject, which names the form.',
          })}
          {f('from_name', 'Sender name (optional)')}
        </>
      );
    case 'telegram':
      return (
        <>
          {f('bot_token', 'Bot token', {
            required: true,
            autocomplete: 'off',
            help: 'From @BotFather. Stored as a secret: it is never shown again.',
          })}
          {f('chat_id', 'Chat id', { required: true, help: 'A numeric chat id or @channelname.' })}
          {f('template', 'Message template (optional)', { textarea: true })}
        </>
      );
    case 'webhook':
      return (
        <>
          {f('url', 'URL', { required: true, type: 'url', placeholder: 'https://example.com/hooks/forms' })}
          <Check
            id={id('sign')}
            name="sign"
            label="Sign deliveries (Service-Signature header)"
            checked={values.sign === 'on' || values.sign === undefined}
            help="The signing secret is shown once, right after the destination is created."
          />
          {f('secret', 'Signing secret (optional)', {
            autocomplete: 'off',
            help: 'Leave empty to have a strong one generated.',
          })}
          {f('headers', 'Extra headers (optional)', {
            textarea: true,
            help: 'One "Name: value" per line, sent with every delivery. Values are stored as secrets.',
          })}
        </>
      );
    default:
      return (
        <>
          {f('url', `${TYPE_LABELS[type]} incoming-webhook URL`, {
            required: true,
            type: 'url',
            autocomplete: 'off',
            help:
              type === 'slack'
                ? 'Starts with https://hooks.slack.com/…'
                : 'Starts with https://discord.com/api/webhooks/…',
          })}
          {f('template', 'Message template (optional)', { textarea: true })}
        </>
      );
  }
};

/** One type's create form: a card with its heading, its fields and a submit button. */
export const CreateForm: FC<FormProps> = ({ c, type, values, issues }) => (
  <section class="card" id={`new-${type}`} aria-labelledby={`new-${type}-title`}>
    <h2 id={`new-${type}-title`}>{TYPE_LABELS[type]}</h2>
    <form method="post" action="/app/destinations">
      <CsrfField c={c} />
      <input type="hidden" name="type" value={type} />
      <Field
        id={`${type}-name`}
        name="name"
        label="Name"
        value={values.name}
        path="name"
        issues={issues}
        required
        help="How it is listed here, e.g. “Sales inbox”."
      />
      <TypeFields type={type} values={values} issues={issues} />
      <p>
        <button type="submit">{`Create ${TYPE_LABELS[type]} destination`}</button>
      </p>
    </form>
  </section>
);
