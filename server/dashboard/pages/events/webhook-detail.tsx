import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { SYSTEM_WEBHOOK_DELIVERY_STATUSES } from '../../../../shared/contracts/webhooks.js';
import type { SystemWebhookOut } from '../../../present/webhooks.js';
import type { listWebhookDeliveries } from '../../../services/webhooks.js';
import { FilterBar, Table } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Badge, Empty, PostForm, Time } from '../../render.js';
import { StatusFilter } from '../routing-ui.js';
import { healthWord } from './webhooks.js';

const pretty = (v: unknown) => JSON.stringify(v, null, 2);
type Deliveries = Awaited<ReturnType<typeof listWebhookDeliveries>>;

/** A system webhook's page: its state, the buttons of a manager, and its deliveries. */
export const WebhookDetail: FC<{
  c: Context<DashEnv>;
  w: SystemWebhookOut;
  list: Deliveries;
  q: { status?: string };
  base: string;
  manage: boolean;
}> = ({ c, w, list, q, base, manage }) => (
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
    {manage ? <WebhookActions c={c} w={w} base={base} /> : null}
    <WebhookDeliveries list={list} q={q} base={base} />
  </>
);

/** Enable or disable, retry the dead deliveries, delete. */
const WebhookActions: FC<{ c: Context<DashEnv>; w: SystemWebhookOut; base: string }> = ({ c, w, base }) => (
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
);

const WebhookDeliveries: FC<{ list: Deliveries; q: { status?: string }; base: string }> = ({ list, q, base }) => (
  <>
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
  </>
);

/** "HTTP 500" / "timeout" — the summary of a last response. */
function lastLine(r: unknown): string {
  const o = (r ?? {}) as { status_code?: unknown; error?: unknown };
  if (typeof o.status_code === 'number') return `HTTP ${o.status_code}`;
  if (typeof o.error === 'string') return o.error;
  return 'answer';
}
