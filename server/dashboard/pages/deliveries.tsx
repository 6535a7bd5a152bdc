import type { Context, Hono } from 'hono';
import { DELIVERY_STATUSES, deliveryOps, REPLAY_STATUSES } from '../../../shared/contracts/deliveries.js';
import { pageOf } from '../../http/pagination.js';
import { listDeliveries, retryDelivery } from '../../services/deliveries.js';
import { retryDeliveries } from '../../services/replay.js';
import { DeliveryTable, FilterBar, formIdOf } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { CsrfField, done, Empty, ErrorBox, page } from '../render.js';
import { Choice, choices, formValues, namesOf, qs, StatusFilter } from './routing-ui.js';

/** The log's filters that the page keeps in its query string (empty ones left out). */
type Filters = { status?: string; destination_id?: string; form_id?: string };

function filtersOf(source: Record<string, string | undefined>): Filters {
  const pick = (k: string) => (source[k]?.trim() ? source[k]?.trim() : undefined);
  return { status: pick('status'), destination_id: pick('destination_id'), form_id: pick('form_id') };
}

/** The bulk replay's filter for the log's filters, or why there is none. */
function replayOf(f: Filters): { body: Record<string, unknown> } | { why: string } {
  if (f.status && !(REPLAY_STATUSES as readonly string[]).includes(f.status)) {
    return { why: `Only dead or failed deliveries are retried together; this list shows ${f.status} ones.` };
  }
  if (!f.destination_id && !f.form_id) {
    return { why: 'To retry many at once, first choose a destination or a form above.' };
  }
  return {
    body: {
      status: f.status ? [f.status] : ['dead', 'failed'],
      ...(f.destination_id ? { destination_id: f.destination_id } : {}),
      ...(f.form_id ? { form_id: f.form_id } : {}),
    },
  };
}

/** A local return address for after a retry: the log with its filters, never another site. */
const backTo = (s: string | undefined) =>
  s && /^\/app\/deliveries(\?[^\s]*)?$/.test(s) && !s.startsWith('//') ? s : '/app/deliveries';

async function describeFilters(c: Context<DashEnv>, f: Filters) {
  const [d, fm] = await Promise.all([namesOf(c, 'destinations', [f.destination_id]), namesOf(c, 'forms', [f.form_id])]);
  return [
    `status ${f.status ?? 'dead or failed'}`,
    f.destination_id ? `destination “${d.get(f.destination_id) ?? f.destination_id}”` : '',
    f.form_id ? `form “${fm.get(f.form_id) ?? f.form_id}”` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

export function registerDeliveryPages(dash: Hono<DashEnv>): void {
  dash.get('/deliveries', async (c) => {
    allow(c, deliveryOps.list);
    const f = filtersOf(c.req.query());
    const cursor = c.req.query('cursor') || undefined;
    const limit = c.req.query('limit') || undefined;
    const q = queryFor(deliveryOps.list, { ...f, cursor, limit });
    const list = await listDeliveries(c.var.deps, c.var.actor, pageOf(q, 'delivery'), q);
    const [destList, formList] = await Promise.all([choices(c, 'destinations'), choices(c, 'forms')]);
    // The rows' names come from the filter choices; only ids beyond them are looked up (one query each).
    const destNames = await withNames(
      c,
      'destinations',
      destList,
      list.data.map((d) => d.destination_id),
    );
    const formNames = await withNames(
      c,
      'forms',
      formList,
      list.data.map((d) => formIdOf(d.payload?.form)),
    );
    const here = `/app/deliveries${qs({ ...f, limit, cursor })}`;
    const replay = replayOf(f);
    return page(
      c,
      { title: 'Deliveries', section: 'deliveries' },
      <>
        <h1>Deliveries</h1>
        <FilterBar
          action="/app/deliveries"
          label="Filter deliveries"
          after={f.status || f.destination_id || f.form_id ? <a href="/app/deliveries">Clear filters</a> : null}
        >
          <StatusFilter id="f-status" statuses={DELIVERY_STATUSES} value={f.status} />
          <Choice
            id="f-destination"
            name="destination_id"
            label="Destination"
            options={destList}
            value={f.destination_id}
            any="Any destination"
          />
          <Choice id="f-form" name="form_id" label="Form" options={formList} value={f.form_id} any="Any form" />
        </FilterBar>
        {list.data.length ? (
          <DeliveryTable
            c={c}
            items={list.data}
            destinations={destNames}
            retry={(d) => `/app/deliveries/${d.id}/retry`}
            log={{ forms: formNames, back: here }}
          />
        ) : cursor ? (
          <p class="muted">No more deliveries.</p>
        ) : (
          <Empty title={f.status || f.destination_id || f.form_id ? 'No deliveries match' : 'No deliveries yet'}>
            <p>
              {f.status || f.destination_id || f.form_id
                ? 'Change or clear the filters to see others.'
                : 'Deliveries appear here when a submission arrives at a form with a route to a destination.'}
            </p>
            <p>
              <a href="/app/routes">See routes</a>
            </p>
          </Empty>
        )}
        {list.next_cursor ? (
          <p class="pager">
            <a href={`/app/deliveries${qs({ ...f, limit, cursor: list.next_cursor })}`}>Older deliveries →</a>
          </p>
        ) : null}
        <section aria-labelledby="bulk-title" class="card">
          <h2 id="bulk-title">Retry all that match</h2>
          {'body' in replay ? (
            <>
              <p>Queue every dead or failed delivery that matches these filters again, with a fresh attempt budget.</p>
              <a class="button secondary" href={`/app/deliveries/retry${qs(f)}`}>
                Retry all that match…
              </a>
            </>
          ) : (
            <p class="muted">{replay.why}</p>
          )}
        </section>
      </>,
    );
  });

  dash.post('/deliveries/:id/retry', async (c) => {
    allow(c, deliveryOps.retry);
    const v = await formValues(c);
    const d = await retryDelivery(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, backTo(v.back), `Delivery ${d.id} is queued again.`);
  });

  /** The confirmation of a bulk retry (works without JavaScript): what will be retried, and a button. */
  dash.get('/deliveries/retry', async (c) => {
    allow(c, deliveryOps.retryAll);
    const f = filtersOf(c.req.query());
    const replay = replayOf(f);
    return page(
      c,
      { title: 'Retry all that match', section: 'deliveries', status: 'body' in replay ? 200 : 422 },
      <>
        <p>
          <a href={`/app/deliveries${qs(f)}`}>← Deliveries</a>
        </p>
        <h1>Retry all that match</h1>
        {'body' in replay ? (
          <>
            <p>
              Every delivery with {await describeFilters(c, f)} will be queued again now, with a fresh attempt budget
              and the same payload and delivery id.
            </p>
            <form method="post" action="/app/deliveries/retry" class="row">
              <CsrfField c={c} />
              {f.status ? <input type="hidden" name="status" value={f.status} /> : null}
              {f.destination_id ? <input type="hidden" name="destination_id" value={f.destination_id} /> : null}
              {f.form_id ? <input type="hidden" name="form_id" value={f.form_id} /> : null}
              <button type="submit">Yes, retry them all</button>
              <a class="button secondary" href={`/app/deliveries${qs(f)}`}>
                Cancel
              </a>
            </form>
          </>
        ) : (
          <ErrorBox message={replay.why} hint="Go back to the delivery log and choose filters." />
        )}
      </>,
    );
  });

  dash.post('/deliveries/retry', async (c) => {
    allow(c, deliveryOps.retryAll);
    const f = filtersOf(await formValues(c));
    const replay = replayOf(f);
    if (!('body' in replay)) {
      return page(
        c,
        { title: 'Retry all that match', section: 'deliveries', status: 422 },
        <ErrorBox message={replay.why} hint="Go back to the delivery log and choose filters." />,
      );
    }
    const result = await retryDeliveries(c.var.deps, c.var.actor, bodyFor(deliveryOps.retryAll, replay.body));
    return done(
      c,
      `/app/deliveries${qs(f)}`,
      `Queued ${result.queued} of ${result.matched} matching deliveries again.`,
    );
  });
}

/** id → name for `ids`: from the rows already loaded, plus one look-up of any missing. */
async function withNames(
  c: Context<DashEnv>,
  kind: 'destinations' | 'forms',
  known: Array<{ id: string; name: string }>,
  ids: Array<string | undefined>,
) {
  const names = new Map(known.map((k) => [k.id, k.name]));
  const missing = ids.filter((id): id is string => !!id && !names.has(id));
  if (missing.length) for (const [id, name] of await namesOf(c, kind, missing)) names.set(id, name);
  return names;
}
