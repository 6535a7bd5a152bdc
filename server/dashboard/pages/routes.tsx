import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { routeOps } from '../../../shared/contracts/routes.js';
import { pageOf } from '../../core/pagination.js';
import { createRoute, deleteRoute, getRoute, listRoutes, updateRoute } from '../../services/routes.js';
import { FieldMessage, Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { Badge, CsrfField, done, Empty, ErrorBox, PostForm, page } from '../render.js';
import { type Issue, issuesAt } from './forms-ui.js';
import { MatchFields, matchFromForm, matchValues } from './route-match.js';
import { Check, Choice, choices, Field, formValues, namesOf, qs, type Values, validationIssues } from './routing-ui.js';

type Route = Awaited<ReturnType<typeof getRoute>>;

const windowText = (w: Route['window']) =>
  !w.from && !w.until
    ? 'always'
    : `${w.from ? w.from.slice(0, 16).replace('T', ' ') : '…'} → ${w.until ? w.until.slice(0, 16).replace('T', ' ') : '…'} UTC`;

const modeText = (m: Route['mode']) => (m.type === 'instant' ? 'Instant' : `Digest: ${m.cron} (${m.timezone})`);

const qualityText = (q: Route['quality']) =>
  [q.exclude_spam ? 'no spam' : 'spam too', q.exclude_quarantined ? 'no quarantined' : 'quarantined too'].join(', ');

/** A route's condition in a table cell: its JSON, shortened. */
const conditionText = (m: NonNullable<Route['match']>) => {
  const json = JSON.stringify(m);
  return json.length > 80 ? `${json.slice(0, 79)}…` : json;
};

/** A route source's choices of one kind, valued `form:<id>` or `stream:<id>` (none: no group). */
const SourceGroup: FC<{
  label: string;
  kind: 'form' | 'stream';
  rows: Array<{ id: string; name: string }>;
  value?: string;
}> = ({ label, kind, rows, value }) =>
  rows.length ? (
    <optgroup label={label}>
      {rows.map((r) => (
        <option value={`${kind}:${r.id}`} selected={value === `${kind}:${r.id}`}>
          {r.name}
        </option>
      ))}
    </optgroup>
  ) : null;

/** The names a RouteTable shows for `routes`: their forms' and streams' (one query each). */
export async function sourceNames(c: Context<DashEnv>, routes: Route[]) {
  const [formNames, streamNames] = await Promise.all([
    namesOf(
      c,
      'forms',
      routes.map((r) => r.form_id),
    ),
    namesOf(
      c,
      'streams',
      routes.map((r) => r.stream_id),
    ),
  ]);
  return { forms: formNames, streams: streamNames };
}

/** Routes as a table: source, (destination), mode, window, quality, state, counts and an Edit link. */
export const RouteTable: FC<{
  routes: Route[];
  forms: Map<string, string>;
  streams: Map<string, string>;
  destinations?: Map<string, string>;
}> = (p) => (
  <Table
    cols={['Source', p.destinations && 'Destination', 'Mode', 'Window', 'Quality', 'State', 'Sent']}
    action="Actions"
  >
    {p.routes.map((r) => (
      <tr>
        <td>
          {r.form_id ? (
            <a href={`/app/forms/${r.form_id}`}>{`Form: ${p.forms.get(r.form_id) ?? r.form_id}`}</a>
          ) : (
            <a href={`/app/streams/${r.stream_id}`}>{`Stream: ${p.streams.get(r.stream_id ?? '') ?? r.stream_id}`}</a>
          )}
        </td>
        {p.destinations ? (
          <td>
            <a href={`/app/destinations/${r.destination_id}`}>
              {p.destinations.get(r.destination_id) ?? r.destination_id}
            </a>
          </td>
        ) : null}
        <td>{modeText(r.mode)}</td>
        <td>{windowText(r.window)}</td>
        <td>
          {qualityText(r.quality)}
          {r.match ? <span class="muted">{`; only when ${conditionText(r.match)}`}</span> : null}
        </td>
        <td>{r.enabled ? <Badge value="enabled" /> : <Badge value="disabled" />}</td>
        <td>{`${r.counts.sent} of ${r.counts.deliveries}`}</td>
        <td>
          <a href={`/app/routes/${r.id}`}>Edit route</a>
        </td>
      </tr>
    ))}
  </Table>
);

/** "2026-01-02T03:04" (a datetime-local input, read as UTC) or a full ISO time → ISO; empty → null. */
function instant(s: string | undefined): string | null {
  const v = s?.trim();
  if (!v) return null;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(v)) return `${v}:00Z`;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?$/.test(v)) return `${v}Z`;
  return v;
}

/** The rule fields shared by create and edit, as the API's body parts. */
function rules(v: Values) {
  const mode =
    v.mode === 'digest'
      ? { type: 'digest' as const, cron: v.cron?.trim() ?? '', timezone: v.timezone?.trim() || 'UTC' }
      : { type: 'instant' as const };
  return {
    mode,
    window: { from: instant(v.from), until: instant(v.until) },
    quality: { exclude_spam: v.exclude_spam === 'on', exclude_quarantined: v.exclude_quarantined === 'on' },
    enabled: v.enabled === 'on',
    match: matchFromForm(v),
  };
}

/** A stored route as the edit form's values. */
function valuesOf(r: Route): Values {
  return {
    _sent: '1',
    destination_id: r.destination_id,
    mode: r.mode.type,
    cron: r.mode.type === 'digest' ? r.mode.cron : '',
    timezone: r.mode.type === 'digest' ? r.mode.timezone : 'UTC',
    from: r.window.from ? r.window.from.slice(0, 16) : '',
    until: r.window.until ? r.window.until.slice(0, 16) : '',
    exclude_spam: r.quality.exclude_spam ? 'on' : '',
    exclude_quarantined: r.quality.exclude_quarantined ? 'on' : '',
    enabled: r.enabled ? 'on' : '',
    ...matchValues(r.match),
  };
}

type Named = Array<{ id: string; name: string }>;

/** Checkbox state: what was posted, or the default on a fresh form. */
const checked = (v: Values, name: string) => (v._sent ? v[name] === 'on' : true);

const RuleFields: FC<{ v: Values; issues?: Issue[]; dests: Named }> = ({ v, issues, dests }) => (
  <>
    <Choice
      id="route-destination"
      name="destination_id"
      label="Destination"
      options={dests}
      value={v.destination_id}
      issues={issues}
      path="destination_id"
    />
    <ModeFields v={v} issues={issues} />
    <fieldset>
      <legend>Window (UTC, optional)</legend>
      <p class="help">Submissions outside it are skipped. Leave a side empty for no limit.</p>
      <Field
        id="route-from"
        name="from"
        label="From"
        type="datetime-local"
        value={v.from}
        path="window.from"
        issues={issues}
      />
      <Field
        id="route-until"
        name="until"
        label="Until"
        type="datetime-local"
        value={v.until}
        path="window.until"
        issues={issues}
      />
    </fieldset>
    <fieldset>
      <legend>Quality</legend>
      <Check id="route-spam" name="exclude_spam" label="Leave out spam" checked={checked(v, 'exclude_spam')} />
      <Check
        id="route-quarantined"
        name="exclude_quarantined"
        label="Leave out quarantined submissions"
        checked={checked(v, 'exclude_quarantined')}
      />
    </fieldset>
    <MatchFields v={v} issues={issues} />
    <Check
      id="route-enabled"
      name="enabled"
      label="Enabled"
      checked={checked(v, 'enabled')}
      help="A disabled route plans no deliveries."
    />
  </>
);

/** Instant or digest, and the digest's schedule and time zone. */
const ModeFields: FC<{ v: Values; issues?: Issue[] }> = ({ v, issues }) => {
  const modeErrs = (issues ?? []).filter((i) => i.path === 'mode' || i.path === 'mode.type');
  return (
    <fieldset>
      <legend>Mode</legend>
      <label for="mode-instant">
        <input type="radio" id="mode-instant" name="mode" value="instant" checked={v.mode !== 'digest'} /> Instant: one
        delivery per submission
      </label>
      <label for="mode-digest">
        <input type="radio" id="mode-digest" name="mode" value="digest" checked={v.mode === 'digest'} /> Digest: one
        delivery per period, collecting the period's submissions (forms only)
      </label>
      <FieldMessage message={modeErrs} />
      <Field
        id="route-cron"
        name="cron"
        label="Digest schedule (cron)"
        value={v.cron}
        path="mode.cron"
        issues={issues}
        placeholder="0 9 * * *"
        help="When a period closes, e.g. 0 9 * * * for every day at 09:00. Used by digest mode only."
      />
      <Field
        id="route-timezone"
        name="timezone"
        label="Time zone"
        value={v.timezone ?? 'UTC'}
        path="mode.timezone"
        issues={issues}
        help="An IANA name such as UTC or Europe/Berlin; the schedule is read in it."
      />
    </fieldset>
  );
};

type ErrorState = { message: string; hint?: string; issues: Issue[] };

async function newRoutePage(c: Context<DashEnv>, v: Values, error?: ErrorState) {
  const [formList, streamList, dests] = await Promise.all([
    choices(c, 'forms'),
    choices(c, 'streams'),
    choices(c, 'destinations'),
  ]);
  const sourceErrs = issuesAt(error?.issues, 'form_id', 'stream_id');
  return page(
    c,
    { title: 'New route', section: 'destinations', status: error ? 422 : 200 },
    <>
      <p>
        <a href={v.destination_id ? `/app/destinations/${v.destination_id}` : '/app/routes'}>← Back</a>
      </p>
      <h1>New route</h1>
      {!dests.length ? (
        <Empty title="Create a destination first">
          <p>A route sends a form's submissions to a destination.</p>
          <p>
            <a class="button" href="/app/destinations/new">
              Create a destination
            </a>
          </p>
        </Empty>
      ) : !formList.length && !streamList.length ? (
        <Empty title="Create a form first">
          <p>A route sends a form's (or a stream's) submissions to a destination.</p>
          <p>
            <a class="button" href="/app/forms">
              Go to forms
            </a>
          </p>
        </Empty>
      ) : (
        <>
          {error ? <ErrorBox message={error.message} hint={error.hint} fields={error.issues} /> : null}
          <form method="post" action="/app/routes" class="card">
            <CsrfField c={c} />
            <input type="hidden" name="_sent" value="1" />
            <div class="field">
              <label for="route-source">Source</label>
              <select
                id="route-source"
                name="source"
                aria-invalid={sourceErrs.length ? 'true' : undefined}
                aria-describedby={sourceErrs.length ? 'route-source-error' : undefined}
              >
                <option value="">Choose a form or stream</option>
                <SourceGroup label="Forms" kind="form" rows={formList} value={v.source} />
                <SourceGroup label="Streams" kind="stream" rows={streamList} value={v.source} />
              </select>
              <FieldMessage id="route-source-error" message={sourceErrs} />
            </div>
            <RuleFields v={v} issues={error?.issues} dests={dests} />
            <p>
              <button type="submit">Create route</button>
            </p>
          </form>
        </>
      )}
    </>,
  );
}

async function editRoutePage(c: Context<DashEnv>, r: Route, v: Values, error?: ErrorState) {
  const dests = await choices(c, 'destinations');
  const [formNames, streamNames] = await Promise.all([
    namesOf(c, 'forms', [r.form_id]),
    namesOf(c, 'streams', [r.stream_id]),
  ]);
  const source = r.form_id
    ? `Form: ${formNames.get(r.form_id) ?? r.form_id}`
    : `Stream: ${streamNames.get(r.stream_id ?? '') ?? r.stream_id}`;
  return page(
    c,
    { title: 'Edit route', section: 'destinations', status: error ? 422 : 200 },
    <>
      <p>
        <a href={`/app/destinations/${r.destination_id}`}>← Destination</a>
      </p>
      <h1>Edit route</h1>
      <p>
        {source} <span class="muted">(the source of a route cannot change)</span> ·{' '}
        {`${r.counts.sent} of ${r.counts.deliveries} deliveries sent`} ·{' '}
        <a href={`/app/deliveries${qs({ destination_id: r.destination_id, form_id: r.form_id })}`}>its deliveries</a>
      </p>
      {error ? <ErrorBox message={error.message} hint={error.hint} fields={error.issues} /> : null}
      <form method="post" action={`/app/routes/${r.id}`} class="card">
        <CsrfField c={c} />
        <input type="hidden" name="_sent" value="1" />
        <RuleFields v={v} issues={error?.issues} dests={dests} />
        <p>
          <button type="submit">Save route</button>
        </p>
      </form>
      <h2>Delete</h2>
      <PostForm
        c={c}
        action={`/app/routes/${r.id}/delete`}
        confirm="Delete this route? Nothing more is sent through it; deliveries already planned are kept."
      >
        <button type="submit" class="danger">
          Delete route
        </button>
      </PostForm>
    </>,
  );
}

/** Every route of the organization, with its source, destination and rules. */
async function routesPage(c: Context<DashEnv>) {
  allow(c, routeOps.list);
  const q = queryFor(routeOps.list, c.req.query());
  const list = await listRoutes(c.var.deps, c.var.actor, pageOf(q, 'route'), q);
  const [names, destNames] = await Promise.all([
    sourceNames(c, list.data),
    namesOf(
      c,
      'destinations',
      list.data.map((r) => r.destination_id),
    ),
  ]);
  return page(
    c,
    { title: 'Routes', section: 'destinations' },
    <>
      <p>
        <a href="/app/destinations">← Destinations</a>
      </p>
      <h1>Routes</h1>
      <p>A route sends a form's or a stream's submissions to a destination, instantly or as a digest.</p>
      <p>
        <a class="button" href="/app/routes/new">
          New route
        </a>
      </p>
      {list.data.length ? (
        <RouteTable routes={list.data} {...names} destinations={destNames} />
      ) : (
        <Empty title="No routes yet">
          <p>Nothing is delivered until a route connects a form to a destination.</p>
        </Empty>
      )}
      {list.next_cursor ? (
        <p class="pager">
          <a
            href={`/app/routes${qs({ form_id: q.form_id, stream_id: q.stream_id, destination_id: q.destination_id, cursor: list.next_cursor })}`}
          >
            Older routes →
          </a>
        </p>
      ) : null}
    </>,
  );
}

export function registerRoutePages(dash: Hono<DashEnv>): void {
  dash.get('/routes', routesPage);

  dash.get('/routes/new', (c) => {
    allow(c, routeOps.create);
    const formId = c.req.query('form_id');
    const streamId = c.req.query('stream_id');
    return newRoutePage(c, {
      destination_id: c.req.query('destination_id') ?? '',
      source: formId ? `form:${formId}` : streamId ? `stream:${streamId}` : '',
      timezone: 'UTC',
    });
  });

  dash.post('/routes', async (c) => {
    allow(c, routeOps.create);
    const v = await formValues(c);
    const [kind, id] = (v.source ?? '').split(':');
    const source = kind === 'form' && id ? { form_id: id } : kind === 'stream' && id ? { stream_id: id } : {};
    try {
      const r = rules(v);
      const body = bodyFor(routeOps.create, {
        ...source,
        destination_id: v.destination_id ?? '',
        ...r,
        window: r.window.from || r.window.until ? r.window : undefined,
      });
      const route = await createRoute(c.var.deps, c.var.actor, body);
      return done(c, `/app/destinations/${route.destination_id}`, 'Route created.');
    } catch (err) {
      const e = validationIssues(err);
      if (!e) throw err;
      return newRoutePage(c, v, e);
    }
  });

  dash.get('/routes/:id', async (c) => {
    allow(c, routeOps.get);
    const r = await getRoute(c.var.deps, c.var.actor, c.req.param('id'));
    return editRoutePage(c, r, valuesOf(r));
  });

  dash.post('/routes/:id', async (c) => {
    allow(c, routeOps.update);
    const current = await getRoute(c.var.deps, c.var.actor, c.req.param('id'));
    const v = await formValues(c);
    try {
      const body = bodyFor(routeOps.update, { destination_id: v.destination_id || undefined, ...rules(v) });
      const route = await updateRoute(c.var.deps, c.var.actor, current.id, body);
      return done(c, `/app/destinations/${route.destination_id}`, 'Route saved.');
    } catch (err) {
      const e = validationIssues(err);
      if (!e) throw err;
      return editRoutePage(c, current, v, e);
    }
  });

  dash.post('/routes/:id/delete', async (c) => {
    allow(c, routeOps.delete);
    const current = await getRoute(c.var.deps, c.var.actor, c.req.param('id'));
    await deleteRoute(c.var.deps, c.var.actor, current.id);
    return done(c, `/app/destinations/${current.destination_id}`, 'Route deleted.');
  });
}
