import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import { DELIVERY_STATUSES } from '../../../../shared/contracts/deliveries.js';
import type { listDeliveries } from '../../../services/deliveries.js';
import { DeliveryTable, FilterBar } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Empty } from '../../render.js';
import { Choice, qs, StatusFilter } from '../routing-ui.js';
import type { Filters, Replay } from './filters.js';

type Named = Array<{ id: string; name: string }>;

/** The delivery log: filters, the deliveries with Retry, the next page, and the bulk retry's entry. */
export const DeliveryLog: FC<{
  c: Context<DashEnv>;
  f: Filters;
  list: Awaited<ReturnType<typeof listDeliveries>>;
  choices: { destinations: Named; forms: Named };
  names: { destinations: Map<string, string>; forms: Map<string, string> };
  page: { here: string; cursor?: string; limit?: string };
  replay: Replay;
}> = ({ c, f, list, choices, names, page, replay }) => (
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
        options={choices.destinations}
        value={f.destination_id}
        any="Any destination"
      />
      <Choice id="f-form" name="form_id" label="Form" options={choices.forms} value={f.form_id} any="Any form" />
    </FilterBar>
    {list.data.length ? (
      <DeliveryTable
        c={c}
        items={list.data}
        destinations={names.destinations}
        retry={(d) => `/app/deliveries/${d.id}/retry`}
        log={{ forms: names.forms, back: page.here }}
      />
    ) : page.cursor ? (
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
        <a href={`/app/deliveries${qs({ ...f, limit: page.limit, cursor: list.next_cursor })}`}>Older deliveries →</a>
      </p>
    ) : null}
    <BulkRetry f={f} replay={replay} />
  </>
);

/** Retry all that match: a link to the confirmation, or why these filters do not allow it. */
const BulkRetry: FC<{ f: Filters; replay: Replay }> = ({ f, replay }) => (
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
);
