import type { FC } from 'hono/jsx';
import type { listDestinations } from '../../../services/destinations.js';
import { Table } from '../../components.js';
import { Empty, Time } from '../../render.js';
import { TYPE_LABELS } from '../destination-forms.js';
import { qs } from '../routing-ui.js';
import { DestinationFlags } from './parts.js';

/** The destinations, newest first, with their state; a first-time explanation when there are none. */
export const DestinationList: FC<{
  list: Awaited<ReturnType<typeof listDestinations>>;
  q: { type?: string; cursor?: string };
}> = ({ list, q }) => (
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
          A destination is where submissions go: an email address, a Telegram chat, a webhook, Slack or Discord. Create
          one, then route a form to it.
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
  </>
);
