import type { Context, Hono } from 'hono';
import { DESTINATION_TYPES, destinationOps } from '../../../shared/contracts/destinations.js';
import { routeOps } from '../../../shared/contracts/routes.js';
import { pageOf } from '../../core/pagination.js';
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
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { done, ErrorBox, page } from '../render.js';
import { CreateForm, destinationBody, isType, TYPE_LABELS } from './destination-forms.js';
import { DestinationList } from './destinations/list.js';
import type { Dest } from './destinations/parts.js';
import { DestinationPage, type Extra } from './destinations/view.js';
import { registerRoutePages, sourceNames } from './routes.js';
import { formValues, type Values, validationIssues } from './routing-ui.js';

async function destinationView(c: Context<DashEnv>, d: Dest, extra: Extra = {}) {
  allow(c, routeOps.list);
  const routes = await listRoutes(c.var.deps, c.var.actor, pageOf({ limit: 100 }, 'route'), { destination_id: d.id });
  const names = await sourceNames(c, routes.data);
  return page(
    c,
    { title: d.name, section: 'destinations' },
    <DestinationPage c={c} d={d} extra={extra} routes={routes.data} names={names} />,
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
    return page(c, { title: 'Destinations', section: 'destinations' }, <DestinationList list={list} q={q} />);
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
