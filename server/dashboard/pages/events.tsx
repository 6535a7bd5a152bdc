import type { Context, Hono } from 'hono';
import { EVENT_TYPES, eventOps } from '../../../shared/contracts/events.js';
import { SYSTEM_WEBHOOK_DELIVERY_STATUSES, webhookOps } from '../../../shared/contracts/webhooks.js';
import { ApiError } from '../../http/errors.js';
import { pageOf } from '../../http/pagination.js';
import { presentWebhook } from '../../present/webhooks.js';
import { listEvents } from '../../services/events.js';
import { retryWebhookDeliveries } from '../../services/replay.js';
import { newWebhookSecret, VERIFY_WEBHOOK } from '../../services/webhook-secret.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhookRow,
  listWebhookDeliveries,
  listWebhooks,
  updateWebhook,
} from '../../services/webhooks.js';
import { FieldMessage, FilterBar, named, Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, issuesOf, queryFor } from '../input.js';
import { Badge, Copyable, CsrfField, done, Empty, ErrorBox, Pager, PostForm, page, Time } from '../render.js';
import { all, can, fieldsOf, formHint, issueAt, one } from './org-common.js';
import { Choice, StatusFilter } from './routing-ui.js';

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** Links for the ids an event is about (submission, form, destination…), else the id as text. */
const SUBJECT_LINKS: Record<string, string> = {
  submission_id: '/app/submissions/',
  form_id: '/app/forms/',
  destination_id: '/app/destinations/',
  stream_id: '/app/streams/',
  webhook_id: '/app/webhooks/',
};

const Subject = ({ subject }: { subject: Record<string, unknown> }) => (
  <ul class="plain">
    {Object.entries(subject).map(([k, v]) => (
      <li>
        <span class="muted">{k}</span>{' '}
        {typeof v === 'string' && SUBJECT_LINKS[k] ? (
          <a href={`${SUBJECT_LINKS[k]}${encodeURIComponent(v)}`}>
            <code>{v}</code>
          </a>
        ) : (
          <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>
        )}
      </li>
    ))}
  </ul>
);

type WebhookValues = { url: string; events: string[]; secret: string; generate: boolean };
const NO_VALUES: WebhookValues = { url: '', events: [], secret: '', generate: true };

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

async function webhooksPage(
  c: Context<DashEnv>,
  form: { values: WebhookValues; error?: ApiError } = { values: NO_VALUES },
) {
  allow(c, webhookOps.list);
  const q = queryFor(webhookOps.list, c.req.query());
  const list = await listWebhooks(c.var.deps, c.var.actor, pageOf(q, 'webhook'));
  const issues = issuesOf(form.error);
  return page(
    c,
    { title: 'System webhooks', section: 'events', status: form.error ? 422 : 200 },
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
      {can(c, webhookOps.create) ? (
        <>
          {form.error ? <ErrorBox message={form.error.message} hint={formHint(form.error)} /> : null}
          <WebhookForm c={c} values={form.values} issues={issues} />
        </>
      ) : null}
    </>,
  );
}

const healthWord = (h: string) => (h === 'ok' ? 'healthy' : h);

export function registerEventPages(dash: Hono<DashEnv>): void {
  dash.get('/events', async (c) => {
    allow(c, eventOps.list);
    const raw = c.req.query();
    // Empty fields of the filter form mean "any"; the rest goes through the API's query schema.
    const kept = Object.fromEntries(
      (['type', 'cursor', 'limit'] as const).flatMap((k) => (raw[k] ? [[k, raw[k]]] : [])),
    ) as Record<string, string>;
    const q = queryFor(eventOps.list, kept);
    const list = await listEvents(c.var.deps, c.var.actor, pageOf(q, 'event'), q);
    const more = (cursor: string) => `/app/events?${new URLSearchParams({ ...kept, cursor }).toString()}`;
    return page(
      c,
      { title: 'Events', section: 'events' },
      <>
        <h1>Event log</h1>
        <p class="muted">
          Everything that happened in this organization, newest first. <a href="/app/webhooks">System webhooks</a> send
          these events to your own URL as they happen.
        </p>
        <FilterBar action="/app/events">
          <Choice id="ev-type" name="type" label="Type" options={named(EVENT_TYPES)} value={q.type} any="All types" />
        </FilterBar>
        {list.data.length === 0 ? (
          <Empty title={q.type ? `No ${q.type} events` : 'No events yet'}>
            <p>
              Events appear when submissions arrive, deliveries are sent or die, schemas change and more. Send a test
              submission to one of your <a href="/app/forms">forms</a> to see the first one.
            </p>
          </Empty>
        ) : (
          <Table cols={['When', 'Type', 'About', 'Data']}>
            {list.data.map((e) => (
              <tr>
                <td>
                  <Time at={e.created_at} />
                </td>
                <td>
                  <code>{e.type}</code>
                </td>
                <td>
                  <Subject subject={e.subject} />
                </td>
                <td>
                  {Object.keys(e.data).length ? (
                    <details>
                      <summary>Show</summary>
                      <pre tabindex={0}>{pretty(e.data)}</pre>
                    </details>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        {list.next_cursor ? (
          <nav class="pager" aria-label="Pages">
            <a href={more(list.next_cursor)}>Older events</a>
          </nav>
        ) : null}
      </>,
    );
  });

  dash.get('/webhooks', (c) => webhooksPage(c));

  dash.post('/webhooks', async (c) => {
    allow(c, webhookOps.create);
    const f = await fieldsOf(c);
    const values: WebhookValues = {
      url: one(f, 'url').trim(),
      events: all(f, 'events'),
      secret: one(f, 'secret'),
      generate: one(f, 'generate') === '1',
    };
    const secret = values.secret ? values.secret : values.generate ? newWebhookSecret() : undefined;
    let created: Awaited<ReturnType<typeof createWebhook>>;
    try {
      const body = bodyFor(webhookOps.create, {
        url: values.url,
        events: values.events,
        ...(secret ? { secret } : {}),
      });
      created = await createWebhook(c.var.deps, c.var.actor, body);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'validation_failed') {
        return webhooksPage(c, { values: { ...values, secret: '' }, error: err });
      }
      throw err;
    }
    // The secret is on this answer only: the webhook's pages and the API show has_secret, never the value.
    return page(
      c,
      { title: 'Webhook added', section: 'events' },
      <>
        <h1>Webhook added</h1>
        <p>
          <a href={`/app/webhooks/${encodeURIComponent(created.id)}`}>{created.url}</a> receives{' '}
          {created.events.join(', ')}.
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
      </>,
    );
  });

  dash.get('/webhooks/:id', async (c) => {
    allow(c, webhookOps.get);
    const id = c.req.param('id');
    const w = presentWebhook(await getWebhookRow(c.var.deps.database.db, c.var.actor.orgId, id));
    allow(c, webhookOps.deliveries);
    const raw = c.req.query();
    const q = queryFor(webhookOps.deliveries, {
      ...(raw.status ? { status: raw.status } : {}),
      ...(raw.cursor ? { cursor: raw.cursor } : {}),
    });
    const list = await listWebhookDeliveries(c.var.deps, c.var.actor, id, pageOf(q, 'webhookDelivery'), q);
    const base = `/app/webhooks/${encodeURIComponent(w.id)}`;
    const manage = can(c, webhookOps.update);
    return page(
      c,
      { title: `Webhook ${w.url}`, section: 'events' },
      <>
        <p>
          <a href="/app/webhooks">← System webhooks</a>
        </p>
        <h1>
          Webhook <span class="break">{w.url}</span>
        </h1>
        <dl class="meta">
          <dt>State</dt>
          <dd>
            <Badge value={w.enabled ? 'enabled' : 'disabled'} /> <Badge value={healthWord(w.health)} />
            {w.disabled_reason ? <span> {w.disabled_reason}</span> : null}
          </dd>
          <dt>Events</dt>
          <dd>{w.events.join(', ')}</dd>
          <dt>Signed</dt>
          <dd>{w.has_secret ? 'yes (the secret is never shown again)' : 'no'}</dd>
          <dt>Failing since</dt>
          <dd>
            <Time at={w.failing_since} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={w.created_at} />
          </dd>
        </dl>
        {manage ? (
          <div class="row">
            <PostForm c={c} action={`${base}/${w.enabled ? 'disable' : 'enable'}`}>
              <button type="submit" class="secondary">
                {w.enabled ? 'Disable' : 'Enable'}
              </button>
            </PostForm>
            <PostForm c={c} action={`${base}/retry`}>
              <button type="submit" class="secondary">
                Retry dead deliveries
              </button>
            </PostForm>
            <PostForm
              c={c}
              action={`${base}/delete`}
              confirm="Delete this webhook and its delivery history? Queued deliveries are not sent."
            >
              <button type="submit" class="danger">
                Delete
              </button>
            </PostForm>
          </div>
        ) : null}
        <h2>Deliveries</h2>
        <FilterBar action={base}>
          <StatusFilter id="wd-status" statuses={SYSTEM_WEBHOOK_DELIVERY_STATUSES} value={q.status} />
        </FilterBar>
        {list.data.length === 0 ? (
          <Empty title="No deliveries yet">
            <p>Each new event of a subscribed type is delivered here; it shows with its attempts and last answer.</p>
          </Empty>
        ) : (
          <Table cols={['Created', 'Event', 'Status', 'Attempts', 'Next attempt', 'Last answer']}>
            {list.data.map((d) => (
              <tr>
                <td>
                  <Time at={d.created_at} />
                </td>
                <td>
                  <code>{d.event_type}</code>
                </td>
                <td>
                  <Badge value={d.status} />
                </td>
                <td>{d.attempts}</td>
                <td>
                  <Time at={d.next_attempt_at} />
                </td>
                <td>
                  {d.last_response ? (
                    <details>
                      <summary>{lastLine(d.last_response)}</summary>
                      <pre tabindex={0}>{pretty(d.last_response)}</pre>
                    </details>
                  ) : d.last_error ? (
                    <span>{d.last_error}</span>
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        {list.next_cursor ? (
          <nav class="pager" aria-label="Pages">
            <a
              href={`${base}?${new URLSearchParams({ ...(q.status ? { status: q.status } : {}), cursor: list.next_cursor }).toString()}`}
            >
              Older deliveries
            </a>
          </nav>
        ) : null}
      </>,
    );
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    dash.post(`/webhooks/:id/${action}`, async (c) => {
      allow(c, webhookOps.update);
      const id = c.req.param('id');
      await updateWebhook(c.var.deps, c.var.actor, id, bodyFor(webhookOps.update, { enabled }));
      return done(c, `/app/webhooks/${encodeURIComponent(id)}`, enabled ? 'Webhook enabled.' : 'Webhook disabled.');
    });
  }

  dash.post('/webhooks/:id/retry', async (c) => {
    allow(c, webhookOps.retryDeliveries);
    const id = c.req.param('id');
    const r = await retryWebhookDeliveries(c.var.deps, c.var.actor, id, bodyFor(webhookOps.retryDeliveries, {}));
    return done(
      c,
      `/app/webhooks/${encodeURIComponent(id)}`,
      r.matched ? `${r.queued} dead deliveries queued again.` : 'No dead delivery to retry.',
    );
  });

  dash.post('/webhooks/:id/delete', async (c) => {
    allow(c, webhookOps.delete);
    await deleteWebhook(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/webhooks', 'Webhook deleted.');
  });
}

/** "HTTP 500" / "timeout" — the summary of a last response. */
function lastLine(r: unknown): string {
  const o = (r ?? {}) as { status_code?: unknown; error?: unknown };
  if (typeof o.status_code === 'number') return `HTTP ${o.status_code}`;
  if (typeof o.error === 'string') return o.error;
  return 'answer';
}
