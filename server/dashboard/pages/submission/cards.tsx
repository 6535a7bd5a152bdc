import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { submissionDetail } from '../../../services/submissions.js';
import { DeliveryTable, Table } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Badge } from '../../render.js';

export type Detail = Awaited<ReturnType<typeof submissionDetail>>;

/** A data value as text: strings as they are, everything else as indented JSON. Never HTML. */
const Value: FC<{ v: unknown }> = ({ v }) => {
  if (typeof v === 'string') return v.includes('\n') || v.length > 120 ? <pre>{v}</pre> : <span>{v}</span>;
  if (v === null || v === undefined) return <span class="muted">empty</span>;
  if (typeof v === 'object') return <pre>{JSON.stringify(v, null, 2)}</pre>;
  return <span>{String(v)}</span>;
};

/** The API's attachment download (it takes the session cookie). */
const fileHref = (submissionId: string, fileId: string) =>
  `/v1/submissions/${encodeURIComponent(submissionId)}/attachments/${encodeURIComponent(fileId)}`;

const size = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

const META_ORDER = ['received_at', 'origin', 'referer', 'ip', 'country', 'user_agent', 'content_type'];

/** The data's fields as text; a file field's value is its file's id, shown as the file's name linked to its download. */
export const FieldsCard: FC<{ s: Detail }> = ({ s }) => {
  const data = s.data && typeof s.data === 'object' ? Object.entries(s.data as Record<string, unknown>) : [];
  const files = new Map(s.attachments.map((a) => [a.id, a.filename]));
  return (
    <section class="card">
      <h2>Fields</h2>
      {data.length ? (
        <dl class="meta">
          {data.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>
                {typeof v === 'string' && files.has(v) ? (
                  <a href={fileHref(s.id, v)} download={files.get(v)}>
                    {files.get(v)}
                  </a>
                ) : (
                  <Value v={v} />
                )}
              </dd>
            </>
          ))}
        </dl>
      ) : (
        <p class="muted">This submission holds no fields.</p>
      )}
    </section>
  );
};

/**
 * Why the spam check scored it: each signal's code (linking to the inbox filtered by it), its text
 * and what it added, then the score. Older submissions have reasons without signals: the codes alone.
 * Nothing fired: no card.
 */
export const SpamCard: FC<{ s: Detail }> = ({ s }) => {
  const signals = s.spam.signals ?? s.spam.reasons.map((code) => ({ code, text: '', weight: null }));
  if (!signals.length) return null;
  return (
    <section class="card" aria-labelledby="spam-signals-h">
      <h2 id="spam-signals-h">Spam signals</h2>
      <p>
        {'Score '}
        <span class="spam-score">{s.spam.score.toFixed(2)}</span>
        <span class="muted">
          {' of 1: each signal adds its weight as independent odds; the form’s threshold (0.8 by default) decides.'}
        </span>
      </p>
      <Table cols={['Signal', 'Why', 'Weight']}>
        {signals.map((g) => (
          <tr>
            <td>
              <a href={`/app?spam_reason=${encodeURIComponent(g.code)}`} title="Submissions with this signal">
                <code>{g.code}</code>
              </a>
            </td>
            <td>{g.text || <span class="muted">not recorded</span>}</td>
            <td>{typeof g.weight === 'number' ? g.weight.toFixed(2) : '—'}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
};

/** What the schema check found (none: no card). */
export const IssuesCard: FC<{ s: Detail }> = ({ s }) => {
  const issues = Array.isArray(s.issues) ? (s.issues as Array<Record<string, unknown>>) : [];
  return (
    <>
      {issues.length ? (
        <section class="card">
          <h2>Schema issues</h2>
          <ul>
            {issues.map((i) => (
              <li>
                <code>{String(i.path ?? i.field ?? '(root)')}</code>: {String(i.message ?? JSON.stringify(i))}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
};

export const AttachmentsCard: FC<{ s: Detail }> = ({ s }) => (
  <section class="card">
    <h2>Attachments</h2>
    {s.attachments.length ? (
      <ul>
        {s.attachments.map((a) => (
          <li>
            <a href={fileHref(s.id, a.id)} download={a.filename}>
              {`Download ${a.filename}`}
            </a>{' '}
            <span class="muted">{`${a.content_type}, ${size(a.size_bytes)}, field ${a.field_name}`}</span>
          </li>
        ))}
      </ul>
    ) : (
      <p class="muted">No files came with it.</p>
    )}
  </section>
);

export const DeliveriesCard: FC<{ c: Context<DashEnv>; s: Detail; dest: Map<string, string> }> = ({ c, s, dest }) => (
  <section class="card">
    <h2>Deliveries</h2>
    {s.deliveries.length ? (
      <DeliveryTable
        c={c}
        items={s.deliveries}
        destinations={dest}
        retry={(d) => `/app/submissions/${encodeURIComponent(s.id)}/deliveries/${encodeURIComponent(d.id)}/retry`}
      />
    ) : (
      <p class="muted">
        No deliveries: no route sent it anywhere. Connect the form to a destination on the{' '}
        <a href="/app/destinations">Destinations</a> page.
      </p>
    )}
  </section>
);

export const DriftCard: FC<{ s: Detail }> = ({ s }) => (
  <>
    {s.drift.length ? (
      <section class="card">
        <h2>Drift</h2>
        <p class="muted">How this submission's data differs from the form's schema.</p>
        <ul>
          {s.drift.map((d) => (
            <li>
              <code>{d.field}</code>
              {`: ${d.kind.replace(/_/g, ' ')} `}
              <Badge value={d.status} />
              <span class="muted">{` seen in ${d.count} submission${d.count === 1 ? '' : 's'}`}</span>
            </li>
          ))}
        </ul>
      </section>
    ) : null}
  </>
);

/** Id, schema version, spam score, then the request's metadata in a fixed order. */
export const DetailsCard: FC<{ s: Detail }> = ({ s }) => {
  const meta = s.meta as Record<string, unknown>;
  const metaKeys = [
    ...META_ORDER.filter((k) => k in meta),
    ...Object.keys(meta).filter((k) => !META_ORDER.includes(k)),
  ];
  return (
    <section class="card">
      <h2>Details</h2>
      <dl class="meta">
        <dt>id</dt>
        <dd>
          <code>{s.id}</code>
        </dd>
        <dt>schema version</dt>
        <dd>{s.form_schema_version ?? 'none'}</dd>
        <dt>spam score</dt>
        <dd>{`${s.spam.score}${s.spam.reasons.length ? ` (${s.spam.reasons.join(', ')})` : ''}`}</dd>
        {metaKeys.map((k) => (
          <>
            <dt>{k.replace(/_/g, ' ')}</dt>
            <dd>
              <Value v={meta[k]} />
            </dd>
          </>
        ))}
      </dl>
    </section>
  );
};
