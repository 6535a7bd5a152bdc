import type { FC } from 'hono/jsx';
import type { getStream, previewStream } from '../../../services/streams.js';
import { Table } from '../../components.js';
import { Badge, Time } from '../../render.js';

type Stream = Awaited<ReturnType<typeof getStream>>;
type Preview = Awaited<ReturnType<typeof previewStream>>;

/** JSON shown as text in a <pre> (escaped by JSX like every other value). */
const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** The required fields and property names of a stream's JSON schema, for the schema table. */
function fieldsOf(schema: unknown): Array<{ name: string; type: string; required: boolean }> {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as { properties?: Record<string, { type?: unknown; format?: unknown }>; required?: unknown };
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    type: [p?.type, p?.format].filter((x) => typeof x === 'string').join(' · ') || 'any',
    required: required.has(name),
  }));
}

/** A stream's page: what it is, then its schema, sources, routes and a preview of mapped submissions. */
export const StreamDetail: FC<{ s: Stream; preview: Preview }> = ({ s, preview }) => (
  <>
    <p>
      <a href="/app/streams">← Streams</a>
    </p>
    <h1>{s.name}</h1>
    <dl class="meta">
      <dt>Slug</dt>
      <dd>
        <code>{s.slug}</code>
      </dd>
      <dt>Id</dt>
      <dd>
        <code>{s.id}</code>
      </dd>
      <dt>Schema version</dt>
      <dd>{s.current_schema_version ? `v${s.current_schema_version}` : 'none'}</dd>
      <dt>Submissions, last 30 days</dt>
      <dd>{s.counts.submissions_30d}</dd>
      <dt>Created</dt>
      <dd>
        <Time at={s.created_at} />
      </dd>
    </dl>

    <SchemaCard s={s} />

    <SourcesCard s={s} />

    <RoutesCard s={s} />

    <PreviewCard preview={preview} />
  </>
);

const SchemaCard: FC<{ s: Stream }> = ({ s }) => {
  const fields = fieldsOf(s.schema?.json_schema);
  return (
    <section class="card" aria-labelledby="schema-h">
      <h2 id="schema-h">Schema</h2>
      {s.schema ? (
        <>
          <p class="muted">
            Version {s.schema.version}, published <Time at={s.schema.created_at} />
            {s.schema.changelog ? ` — ${s.schema.changelog}` : ''}
          </p>
          {fields.length ? (
            <Table cols={['Field', 'Type', 'Required']}>
              {fields.map((f) => (
                <tr>
                  <td>
                    <code>{f.name}</code>
                  </td>
                  <td>{f.type}</td>
                  <td>{f.required ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </Table>
          ) : null}
          <details>
            <summary>JSON Schema</summary>
            <pre tabindex={0}>{pretty(s.schema.json_schema)}</pre>
          </details>
        </>
      ) : (
        <p>
          This stream has no schema yet. Publish one with <code>POST /v1/streams/{s.id}/schema</code>.
        </p>
      )}
    </section>
  );
};

const SourcesCard: FC<{ s: Stream }> = ({ s }) => (
  <section class="card" aria-labelledby="sources-h">
    <h2 id="sources-h">Sources</h2>
    {s.sources.length === 0 ? (
      <p>
        No form feeds this stream. Attach one with <code>POST /v1/streams/{s.id}/sources</code> (a form id or a{' '}
        <code>tag:</code>/<code>project:</code> selector).
      </p>
    ) : (
      <Table cols={['Source', 'Mapping', 'Missing fields', 'Checked against', 'Mapping rules']}>
        {s.sources.map((src) => (
          <tr>
            <td>
              {src.form_id ? (
                <a href={`/app/forms/${encodeURIComponent(src.form_id)}`}>
                  <code>{src.form_id}</code>
                </a>
              ) : (
                <code>{src.selector ?? ''}</code>
              )}
            </td>
            <td>
              <Badge value={src.mapping_status === 'valid' ? 'healthy' : 'failing'} /> <span>{src.mapping_status}</span>
            </td>
            <td>
              {src.missing.length ? (
                <ul>
                  {src.missing.map((m) => (
                    <li>
                      <code>{m}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                <span class="muted">none</span>
              )}
            </td>
            <td>v{src.stream_schema_version}</td>
            <td>
              {Object.keys(src.mapping).length ? (
                <pre tabindex={0}>{pretty(src.mapping)}</pre>
              ) : (
                <span class="muted">same field names</span>
              )}
            </td>
          </tr>
        ))}
      </Table>
    )}
  </section>
);

const RoutesCard: FC<{ s: Stream }> = ({ s }) => (
  <section class="card" aria-labelledby="routes-h">
    <h2 id="routes-h">Routes</h2>
    {s.routes.length === 0 ? (
      <p>No route delivers this stream yet. Add one on a destination's page or with POST /v1/routes.</p>
    ) : (
      <ul>
        {s.routes.map((r) => (
          <li>
            <code>{r.id}</code> → <code>{r.destination_id}</code> (
            {r.mode.type === 'digest' ? `digest ${r.mode.cron} ${r.mode.timezone}` : 'instant'}){' '}
            <Badge value={r.enabled ? 'enabled' : 'disabled'} />
          </li>
        ))}
      </ul>
    )}
  </section>
);

const PreviewCard: FC<{ preview: Preview }> = ({ preview }) => (
  <section class="card" aria-labelledby="preview-h">
    <h2 id="preview-h">Preview</h2>
    <p class="muted">
      The newest received submissions of the source forms, mapped through the current mappings (fields the mapping does
      not use are listed as extras).
    </p>
    {preview.data.length === 0 ? (
      <p>No submission of a source form yet. Send one to a source form and it shows here mapped.</p>
    ) : (
      <Table cols={['Received', 'Submission', 'Mapped data', 'Extras']}>
        {preview.data.map((p) => (
          <tr>
            <td>
              <Time at={p.received_at} />
            </td>
            <td>
              <a href={`/app/submissions/${encodeURIComponent(p.submission_id)}`}>
                <code>{p.submission_id}</code>
              </a>
              {p.mapping_status === 'incomplete' ? (
                <>
                  {' '}
                  <Badge value="failing" /> <span>incomplete mapping</span>
                </>
              ) : null}
            </td>
            <td>
              <pre tabindex={0}>{pretty(p.data)}</pre>
            </td>
            <td>
              {Object.keys(p.extras).length ? (
                <pre tabindex={0}>{pretty(p.extras)}</pre>
              ) : (
                <span class="muted">none</span>
              )}
            </td>
          </tr>
        ))}
      </Table>
    )}
  </section>
);
