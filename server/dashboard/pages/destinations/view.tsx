import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { DeliveryResultOut as DeliveryResult } from '../../../present/deliveries.js';
import type { listRoutes } from '../../../services/routes.js';
import { VERIFY_WEBHOOK } from '../../../services/webhook-secret.js';
import type { DashEnv } from '../../env.js';
import { Copyable, PostForm, Time } from '../../render.js';
import { TYPE_LABELS } from '../destination-forms.js';
import { RouteTable, type sourceNames } from '../routes.js';
import { qs } from '../routing-ui.js';
import { configLines, type Dest, DestinationFlags, ResultBox } from './parts.js';

type Routes = Awaited<ReturnType<typeof listRoutes>>['data'];
type Names = Awaited<ReturnType<typeof sourceNames>>;
export type Extra = { secret?: string; warnings?: string[]; test?: DeliveryResult };

/** A destination: a new one's secret and warnings, a test's answer, then what it is, its routes, Delete. */
export const DestinationPage: FC<{ c: Context<DashEnv>; d: Dest; extra: Extra; routes: Routes; names: Names }> = ({
  c,
  d,
  extra,
  routes,
  names,
}) => (
  <>
    <p>
      <a href="/app/destinations">← Destinations</a>
    </p>
    <h1>{d.name}</h1>
    {d.approval === 'pending' ? (
      <p class="banner" role="status">
        It waits for approval: nothing is sent to it yet. <a href={`/app/approvals/${d.id}`}>Review it</a>
      </p>
    ) : null}
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
    <AboutCard c={c} d={d} />
    <RoutesCard d={d} routes={routes} names={names} />
    <DeleteCard c={c} d={d} />
  </>
);

const AboutCard: FC<{ c: Context<DashEnv>; d: Dest }> = ({ c, d }) => {
  const lines = configLines(d.config);
  return (
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
  );
};

const RoutesCard: FC<{ d: Dest; routes: Routes; names: Names }> = ({ d, routes, names }) => (
  <section aria-labelledby="routes-title">
    <h2 id="routes-title">Routes to this destination</h2>
    {routes.length ? <RouteTable routes={routes} {...names} /> : <p class="muted">No form or stream sends here yet.</p>}
    <p>
      <a class="button" href={`/app/routes/new${qs({ destination_id: d.id })}`}>
        Add a route
      </a>
    </p>
  </section>
);

const DeleteCard: FC<{ c: Context<DashEnv>; d: Dest }> = ({ c, d }) => (
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
);
