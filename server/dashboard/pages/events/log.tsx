import type { FC } from 'hono/jsx';
import { EVENT_TYPES } from '../../../../shared/contracts/events.js';
import type { listEvents } from '../../../services/events.js';
import { FilterBar, named, Table } from '../../components.js';
import { Empty, Time } from '../../render.js';
import { Choice } from '../routing-ui.js';

type List = Awaited<ReturnType<typeof listEvents>>;

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

/** The event log: newest first, filtered by type, each event's subject linked and its data shown on demand. */
export const EventLog: FC<{ list: List; q: { type?: string }; more: (cursor: string) => string }> = ({
  list,
  q,
  more,
}) => (
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
  </>
);
