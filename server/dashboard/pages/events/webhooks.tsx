import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { EVENT_TYPES } from '../../../../shared/contracts/events.js';
import type { ApiError } from '../../../core/errors.js';
import { VERIFY_WEBHOOK } from '../../../services/webhook-secret.js';
import type { createWebhook, listWebhooks } from '../../../services/webhooks.js';
import { FieldMessage, Table } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Badge, Copyable, CsrfField, Empty, ErrorBox, Pager, Time } from '../../render.js';
import { formHint, issueAt } from '../org-common.js';

export type WebhookValues = { url: string; events: string[]; secret: string; generate: boolean };
export const NO_VALUES: WebhookValues = { url: '', events: [], secret: '', generate: true };

/** "ok" reads as "healthy", like the destinations' badges. */
export const healthWord = (h: string) => (h === 'ok' ? 'healthy' : h);

/** The create form, with the values kept and errors next to their fields after a refusal. */
const WebhookForm = ({
  c,
  values,
  issues,
}: {
  c: Context<DashEnv>;
  values: WebhookValues;
  issues: Array<{ path: string; message: string }>;
}) => {
  const urlError = issueAt(issues, 'url');
  const eventsRaw = issueAt(issues, 'events');
  const eventsError = /too small|expected array/i.test(eventsRaw) ? 'Tick at least one event.' : eventsRaw;
  const secretError = issueAt(issues, 'secret');
  return (
    <form method="post" action="/app/webhooks" class="card" aria-labelledby="new-h">
      <h2 id="new-h">Add a system webhook</h2>
      <CsrfField c={c} />
      <label for="wh-url">URL that receives the events</label>
      <input
        id="wh-url"
        name="url"
        type="url"
        required
        value={values.url}
        placeholder="https://example.com/formsvc-events"
        aria-invalid={urlError ? 'true' : undefined}
        aria-describedby={urlError ? 'wh-url-error' : undefined}
      />
      <FieldMessage id="wh-url-error" message={urlError} />
      <fieldset>
        <legend>Events</legend>
        {EVENT_TYPES.map((t) => (
          <label class="check">
            <input type="checkbox" name="events" value={t} checked={values.events.includes(t)} /> <code>{t}</code>
          </label>
        ))}
        <FieldMessage message={eventsError} />
      </fieldset>
      <label class="check">
        <input type="checkbox" name="generate" value="1" checked={values.generate} /> Sign deliveries with a new secret
        (shown once, after creating)
      </label>
      <label for="wh-secret">Or your own signing secret (optional, 8 to 200 characters)</label>
      <input
        id="wh-secret"
        name="secret"
        type="text"
        autocomplete="off"
        value={values.secret}
        aria-invalid={secretError ? 'true' : undefined}
      />
      <FieldMessage message={secretError} />
      <p>
        <button type="submit">Add webhook</button>
      </p>
    </form>
  );
};

/** The system webhooks: the list, then the create form (with a refusal's message and marked fields). */
export const WebhookList: FC<{
  c: Context<DashEnv>;
  list: Awaited<ReturnType<typeof listWebhooks>>;
  form: { values: WebhookValues; error?: ApiError };
  issues: Array<{ path: string; message: string }>;
  create: boolean;
}> = ({ c, list, form, issues, create }) => (
  <>
    <p>
      <a href="/app/events">← Event log</a>
    </p>
    <h1>System webhooks</h1>
    <p class="muted">
      A system webhook receives every new event of the types it subscribes to as a JSON POST, retried like webhook
      destinations.
    </p>
    {list.data.length === 0 ? (
      <Empty title="No system webhooks yet">
        <p>Add one below: give the URL of your receiver and the events it wants.</p>
      </Empty>
    ) : (
      <Table cols={['URL', 'Events', 'State', 'Signed', 'Created']}>
        {list.data.map((w) => (
          <tr>
            <td>
              <a href={`/app/webhooks/${encodeURIComponent(w.id)}`}>{w.url}</a>
            </td>
            <td>{w.events.join(', ')}</td>
            <td>
              <Badge value={w.enabled ? 'enabled' : 'disabled'} /> <Badge value={healthWord(w.health)} />
            </td>
            <td>{w.has_secret ? 'yes' : 'no'}</td>
            <td>
              <Time at={w.created_at} />
            </td>
          </tr>
        ))}
      </Table>
    )}
    <Pager
      href={list.next_cursor ? `/app/webhooks?cursor=${encodeURIComponent(list.next_cursor)}` : null}
      label="Older webhooks"
    />
    {create ? (
      <>
        {form.error ? <ErrorBox message={form.error.message} hint={formHint(form.error)} /> : null}
        <WebhookForm c={c} values={form.values} issues={issues} />
      </>
    ) : null}
  </>
);

/** After creating: the webhook, and its new signing secret shown this once. */
export const WebhookAdded: FC<{ created: Awaited<ReturnType<typeof createWebhook>>; secret?: string }> = ({
  created,
  secret,
}) => (
  <>
    <h1>Webhook added</h1>
    <p>
      <a href={`/app/webhooks/${encodeURIComponent(created.id)}`}>{created.url}</a> receives {created.events.join(', ')}
      .
    </p>
    {secret ? (
      <section class="card" aria-labelledby="secret-h">
        <h2 id="secret-h">Signing secret</h2>
        <p>
          <strong>Copy it now: it is shown only this once.</strong> Give it to your receiver to check each delivery.
        </p>
        <Copyable id="webhook-secret" text={secret} label="secret" />
        <p class="muted">{VERIFY_WEBHOOK}</p>
      </section>
    ) : (
      <p>Deliveries are not signed. Set a secret later with PATCH /v1/webhooks/{created.id}.</p>
    )}
    <p>
      <a class="button" href={`/app/webhooks/${encodeURIComponent(created.id)}`}>
        Open the webhook
      </a>
    </p>
  </>
);
