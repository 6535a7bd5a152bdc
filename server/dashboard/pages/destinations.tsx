import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { DESTINATION_TYPES, destinationOps } from '../../../shared/contracts/destinations.js';
import { routeOps } from '../../../shared/contracts/routes.js';
import { pageOf } from '../../http/pagination.js';
import type { DeliveryResultOut as DeliveryResult } from '../../present/deliveries.js';
import { presentDestination } from '../../present/destinations.js';
import { testDestination } from '../../services/destination-test.js';
import {
  createDestination,
  deleteDestination,
  getDestinationRow,
  listDestinations,
  updateDestination,
} from '../../services/destinations.js';
import { listRoutes } from '../../services/routes.js';
import { VERIFY_WEBHOOK } from '../../services/webhook-secret.js';
import { Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { Badge, Copyable, done, Empty, ErrorBox, PostForm, page, Time } from '../render.js';
import { CreateForm, destinationBody, isType, TYPE_LABELS } from './destination-forms.js';
import { RouteTable, registerRoutePages, sourceNames } from './routes.js';
import { formValues, qs, type Values, validationIssues } from './routing-ui.js';

type Dest = ReturnType<typeof presentDestination>;

/** Health, verified and enabled as badges (with why it is disabled). */
export const DestinationFlags: FC<{ d: Dest }> = ({ d }) => (
  <>
    <Badge value={d.health === 'ok' ? 'healthy' : d.health} />{' '}
    {d.verified ? <Badge value="verified" /> : <span class="muted">not verified</span>}{' '}
    {d.enabled ? <Badge value="enabled" /> : <Badge value="disabled" />}
    {!d.enabled && d.disabled_reason ? <span class="muted">{` (${d.disabled_reason})`}</span> : null}
  </>
);

/** A stored config as read through the API (secrets already redacted), one line per key. */
function configLines(config: Record<string, unknown>) {
  return Object.entries(config).map(([k, v]) => {
    let text: string;
    if (Array.isArray(v)) text = v.map(String).join(', ');
    else if (v && typeof v === 'object')
      text = Object.entries(v as Record<string, unknown>)
        .map(([n, x]) => `${n}: ${String(x)}`)
        .join('\n');
    else text = String(v);
    return { key: k, text };
  });
}

/** What a test send (or an attempt) answered. */
export const ResultBox: FC<{ r: DeliveryResult; title: string }> = ({ r, title }) => (
  <section class={r.ok ? 'card notice-card' : 'card'} aria-labelledby="test-result-title">
    <h2 id="test-result-title">{title}</h2>
    <p role="status">
      {r.ok ? <Badge value="sent" /> : <Badge value="failed" />}{' '}
      {r.status_code !== null ? `HTTP ${r.status_code}` : 'no HTTP answer'} in {Math.round(r.latency_ms)} ms
    </p>
    {r.error ? <p class="field-error">{r.error}</p> : null}
    {r.response_excerpt ? <pre tabindex={0}>{r.response_excerpt}</pre> : null}
  </section>
);

async function destinationView(
  c: Context<DashEnv>,
  d: Dest,
  extra: { secret?: string; warnings?: string[]; test?: DeliveryResult } = {},
) {
  allow(c, routeOps.list);
  const routes = await listRoutes(c.var.deps, c.var.actor, pageOf({ limit: 100 }, 'route'), { destination_id: d.id });
  const names = await sourceNames(c, routes.data);
  const lines = configLines(d.config);
  return page(
    c,
    { title: d.name, section: 'destinations' },
    <>
      <p>
        <a href="/app/destinations">← Destinations</a>
      </p>
      <h1>{d.name}</h1>
      {extra.warnings?.length ? (
        <div class="error" role="alert">
          {extra.warnings.map((w) => (
            <p>{w}</p>
          ))}
        </div>
      ) : null}
      {extra.secret ? (
        <section class="card" aria-labelledby="secret-title">
          <h2 id="secret-title">Signing secret</h2>
          <p>
            <strong>Copy it now: it is shown only this once.</strong> Deliveries carry a Service-Signature made with it.
          </p>
          <Copyable id="signing-secret" text={extra.secret} label="secret" />
          <p class="help">{VERIFY_WEBHOOK}</p>
        </section>
      ) : null}
      {extra.test ? <ResultBox r={extra.test} title="Test result" /> : null}
      <section class="card" aria-labelledby="about-title">
        <h2 id="about-title">About</h2>
        <dl class="meta">
          <dt>Type</dt>
          <dd>{TYPE_LABELS[d.type]}</dd>
          <dt>State</dt>
          <dd>
            <DestinationFlags d={d} />
          </dd>
          <dt>Failing since</dt>
          <dd>
            <Time at={d.failing_since} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={d.created_at} />
          </dd>
          {lines.map((l) => (
            <>
              <dt>{l.key}</dt>
              <dd class="mono">{l.text}</dd>
            </>
          ))}
        </dl>
        <div class="row">
          <PostForm c={c} action={`/app/destinations/${d.id}/test`}>
            <button type="submit">Send a test</button>
          </PostForm>
          <PostForm c={c} action={`/app/destinations/${d.id}/enabled`}>
            <input type="hidden" name="enabled" value={d.enabled ? 'false' : 'true'} />
            <button type="submit" class="secondary">
              {d.enabled ? 'Disable' : 'Enable'}
            </button>
          </PostForm>
          <a class="button secondary" href={`/app/deliveries${qs({ destination_id: d.id })}`}>
            Deliveries
          </a>
        </div>
        <p class="help">
          A disabled destination keeps its deliveries waiting; enabling it sends them. A test sends a sample submission
          now and marks the destination verified when it succeeds.
        </p>
      </section>
      <section aria-labelledby="routes-title">
        <h2 id="routes-title">Routes to this destination</h2>
        {routes.data.length ? (
          <RouteTable routes={routes.data} {...names} />
        ) : (
          <p class="muted">No form or stream sends here yet.</p>
        )}
        <p>
          <a class="button" href={`/app/routes/new${qs({ destination_id: d.id })}`}>
            Add a route
          </a>
        </p>
      </section>
      <section aria-labelledby="danger-title">
        <h2 id="danger-title">Delete</h2>
        <PostForm
          c={c}
          action={`/app/destinations/${d.id}/delete`}
          confirm={`Delete the destination “${d.name}”? This cannot be undone.`}
        >
          <p class="help">Only a destination no route uses can be deleted.</p>
          <button type="submit" class="danger">
            Delete destination
          </button>
        </PostForm>
      </section>
    </>,
  );
}

function newPage(
  c: Context<DashEnv>,
  state: {
    type?: string;
    values?: Values;
    error?: { message: string; hint?: string; issues: Array<{ path: string; message: string }> };
  } = {},
) {
  const only = isType(state.type) ? state.type : undefined;
  return page(
    c,
    { title: 'New destination', section: 'destinations', status: state.error ? 422 : 200 },
    <>
      <p>
        <a href="/app/destinations">← Destinations</a>
      </p>
      <h1>New destination</h1>
      <p>Where submissions go. Pick the kind below; after creating it, add a route from a form to it.</p>
      <nav aria-label="Destination types">
        <ul class="row plain">
          {DESTINATION_TYPES.map((t) => (
            <li>
              <a href={`/app/destinations/new?type=${t}#new-${t}`}>{TYPE_LABELS[t]}</a>
            </li>
          ))}
        </ul>
      </nav>
      {state.error ? (
        <ErrorBox message={state.error.message} hint={state.error.hint} fields={state.error.issues} />
      ) : null}
      {(only ? [only] : DESTINATION_TYPES).map((t) => (
        <CreateForm
          c={c}
          type={t}
          values={t === only ? (state.values ?? {}) : {}}
          issues={t === only ? state.error?.issues : undefined}
        />
      ))}
      {only ? (
        <p>
          <a href="/app/destinations/new">Show every type</a>
        </p>
      ) : null}
    </>,
  );
}

export function registerDestinationPages(dash: Hono<DashEnv>): void {
  dash.get('/destinations', async (c) => {
    allow(c, destinationOps.list);
    const q = queryFor(destinationOps.list, c.req.query());
    const list = await listDestinations(c.var.deps, c.var.actor, pageOf(q, 'destination'), q);
    return page(
      c,
      { title: 'Destinations', section: 'destinations' },
      <>
        <h1>Destinations</h1>
        <div class="row">
          <a class="button" href="/app/destinations/new">
            New destination
          </a>
          <a class="button secondary" href="/app/routes">
            Routes
          </a>
          <a class="button secondary" href="/app/deliveries">
            Delivery log
          </a>
        </div>
        {list.data.length ? (
          <Table cols={['Name', 'Type', 'State', 'Created']} caption="Where submissions are delivered">
            {list.data.map((d) => (
              <tr>
                <td>
                  <a href={`/app/destinations/${d.id}`}>{d.name}</a>
                </td>
                <td>{TYPE_LABELS[d.type]}</td>
                <td>
                  <DestinationFlags d={d} />
                </td>
                <td>
                  <Time at={d.created_at} />
                </td>
              </tr>
            ))}
          </Table>
        ) : q.cursor ? (
          <p class="muted">No more destinations.</p>
        ) : (
          <Empty title="No destinations yet">
            <p>
              A destination is where submissions go: an email address, a Telegram chat, a webhook, Slack or Discord.
              Create one, then route a form to it.
            </p>
            <p>
              <a class="button" href="/app/destinations/new">
                Create a destination
              </a>
            </p>
          </Empty>
        )}
        {list.next_cursor ? (
          <p class="pager">
            <a href={`/app/destinations${qs({ type: q.type, cursor: list.next_cursor })}`}>Older destinations →</a>
          </p>
        ) : null}
      </>,
    );
  });

  dash.get('/destinations/new', (c) => {
    allow(c, destinationOps.create);
    return newPage(c, { type: c.req.query('type') });
  });

  dash.post('/destinations', async (c) => {
    allow(c, destinationOps.create);
    const values = await formValues(c);
    const type = values.type;
    if (!isType(type)) {
      return newPage(c, {
        error: { message: 'Choose a destination type.', issues: [{ path: 'type', message: 'unknown type' }] },
      });
    }
    try {
      const { body, secret } = destinationBody(type, values);
      const created = await createDestination(c.var.deps, c.var.actor, bodyFor(destinationOps.create, body));
      const { warnings, ...d } = created;
      return destinationView(c, d, { secret, warnings });
    } catch (err) {
      const v = validationIssues(err);
      if (!v) throw err;
      return newPage(c, { type, values, error: v });
    }
  });

  dash.get('/destinations/:id', async (c) => {
    allow(c, destinationOps.get);
    const row = await getDestinationRow(c.var.deps.database.db, c.var.actor.orgId, c.req.param('id'));
    return destinationView(c, presentDestination(row));
  });

  dash.post('/destinations/:id/test', async (c) => {
    allow(c, destinationOps.test);
    const id = c.req.param('id');
    const result = await testDestination(c.var.deps, c.var.actor, id);
    const row = await getDestinationRow(c.var.deps.database.db, c.var.actor.orgId, id);
    return destinationView(c, presentDestination(row), { test: result });
  });

  dash.post('/destinations/:id/enabled', async (c) => {
    allow(c, destinationOps.update);
    const values = await formValues(c);
    const body = bodyFor(destinationOps.update, { enabled: values.enabled === 'true' });
    const d = await updateDestination(c.var.deps, c.var.actor, c.req.param('id'), body);
    return done(c, `/app/destinations/${d.id}`, d.enabled ? 'Enabled: waiting deliveries are sent now.' : 'Disabled.');
  });

  dash.post('/destinations/:id/delete', async (c) => {
    allow(c, destinationOps.delete);
    await deleteDestination(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/destinations', 'Destination deleted.');
  });

  registerRoutePages(dash);
}
