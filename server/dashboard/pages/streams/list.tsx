import type { FC } from 'hono/jsx';
import type { listStreams } from '../../../services/streams.js';
import { Table } from '../../components.js';
import { Empty, Pager, Time } from '../../render.js';

type List = Awaited<ReturnType<typeof listStreams>>;

/** The streams list: name, schema version, sources, routes and recent submissions of each. */
export const StreamList: FC<{ list: List }> = ({ list }) => (
  <>
    <h1>Streams</h1>
    <p class="muted">
      A stream gathers the submissions of several forms under one schema: each source form's fields are mapped onto the
      stream's fields, and routes deliver the mapped object.
    </p>
    {list.data.length === 0 ? (
      <Empty title="No streams yet">
        <p>
          Create one with <code>formsvc streams create</code> or <code>POST /v1/streams</code>, giving a name and the
          forms that feed it; it then shows here with its schema, sources and a preview.
        </p>
      </Empty>
    ) : (
      <Table
        cols={['Name', 'Slug', 'Schema', 'Sources', 'Routes', 'Submissions (30 days)', 'Created']}
        caption="Newest first"
      >
        {list.data.map((s) => (
          <tr>
            <td>
              <a href={`/app/streams/${encodeURIComponent(s.id)}`}>{s.name}</a>
            </td>
            <td>
              <code>{s.slug}</code>
            </td>
            <td>{s.current_schema_version ? `v${s.current_schema_version}` : '—'}</td>
            <td>{s.counts.sources}</td>
            <td>{s.counts.routes}</td>
            <td>{s.counts.submissions_30d}</td>
            <td>
              <Time at={s.created_at} />
            </td>
          </tr>
        ))}
      </Table>
    )}
    <Pager
      href={list.next_cursor ? `/app/streams?cursor=${encodeURIComponent(list.next_cursor)}` : null}
      label="Older streams"
    />
  </>
);
