import { and, eq, inArray } from 'drizzle-orm';
import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { deliveryOps } from '../../../shared/contracts/deliveries.js';
import { submissionOps } from '../../../shared/contracts/submissions.js';
import { destinations, forms } from '../../db/schema.js';
import { retryDelivery } from '../../services/deliveries.js';
import { submissionDetail, updateSubmission } from '../../services/submissions.js';
import { DeliveryTable } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor } from '../input.js';
import { Badge, done, Empty, PostForm, page, Time } from '../render.js';

type Detail = Awaited<ReturnType<typeof submissionDetail>>;

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

/** Mark spam, not spam, release from quarantine: the reclassifications PATCH /v1/submissions/{id} allows. */
const Actions: FC<{ c: Context<DashEnv>; s: Detail }> = ({ c, s }) => {
  const action = `/app/submissions/${encodeURIComponent(s.id)}/status`;
  return (
    <div class="row">
      {s.status === 'quarantined' ? (
        <PostForm c={c} action={action}>
          <input type="hidden" name="status" value="received" />
          <button type="submit">Release from quarantine</button>
        </PostForm>
      ) : null}
      {s.status === 'spam' ? (
        <PostForm c={c} action={action}>
          <input type="hidden" name="status" value="received" />
          <button type="submit">Not spam</button>
        </PostForm>
      ) : (
        <PostForm c={c} action={action}>
          <input type="hidden" name="status" value="spam" />
          <button type="submit" class="danger">
            Mark as spam
          </button>
        </PostForm>
      )}
    </div>
  );
};

function SubmissionPage({
  c,
  s,
  formName,
  dest,
}: {
  c: Context<DashEnv>;
  s: Detail;
  formName?: string;
  dest: Map<string, string>;
}) {
  const data = s.data && typeof s.data === 'object' ? Object.entries(s.data as Record<string, unknown>) : [];
  // A file field's value is its file's id: shown as the file's name, linked to its download.
  const files = new Map(s.attachments.map((a) => [a.id, a.filename]));
  const meta = s.meta as Record<string, unknown>;
  const metaKeys = [
    ...META_ORDER.filter((k) => k in meta),
    ...Object.keys(meta).filter((k) => !META_ORDER.includes(k)),
  ];
  const issues = Array.isArray(s.issues) ? (s.issues as Array<Record<string, unknown>>) : [];
  return (
    <>
      <p>
        <a href="/app">← Inbox</a>
      </p>
      <h1>Submission</h1>
      <p>
        <Badge value={s.status} />
        {s.quarantine_reason ? <span>{` quarantined because: ${s.quarantine_reason.replace(/_/g, ' ')}`}</span> : null}
        {s.test ? (
          <>
            {' '}
            <Badge value="test" />
          </>
        ) : null}{' '}
        <span class="muted">
          {'to '}
          <a href={`/app/forms/${encodeURIComponent(s.form_id)}`}>{formName ?? s.form_id}</a>
          {', received '}
          <Time at={s.received_at} />
        </span>
      </p>
      <Actions c={c} s={s} />

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
    </>
  );
}

/** One submission: its fields as text, files, deliveries with Retry, drift, and reclassification. */
export function registerSubmissionPages(dash: Hono<DashEnv>): void {
  dash.get('/submissions/:id', async (c) => {
    allow(c, submissionOps.get);
    const deps = c.var.deps;
    const orgId = c.var.actor.orgId;
    const s = await submissionDetail(deps, c.var.actor, c.req.param('id'));
    const destIds = [...new Set(s.deliveries.map((d) => d.destination_id))];
    const db = deps.database.db;
    const [[form], dests] = await Promise.all([
      db
        .select({ name: forms.name })
        .from(forms)
        .where(and(eq(forms.id, s.form_id), eq(forms.orgId, orgId)))
        .limit(1),
      destIds.length
        ? db
            .select({ id: destinations.id, name: destinations.name })
            .from(destinations)
            .where(and(eq(destinations.orgId, orgId), inArray(destinations.id, destIds)))
        : Promise.resolve([]),
    ]);
    return page(
      c,
      { title: `Submission ${s.id}`, section: 'inbox' },
      <SubmissionPage c={c} s={s} formName={form?.name} dest={new Map(dests.map((d) => [d.id, d.name]))} />,
    );
  });

  dash.post('/submissions/:id/status', async (c) => {
    allow(c, submissionOps.update);
    const form = await c.req.parseBody();
    const body = bodyFor(submissionOps.update, { status: form.status });
    const id = c.req.param('id');
    const s = await updateSubmission(c.var.deps, c.var.actor, id, body);
    const notice = s.status === 'spam' ? 'Marked as spam.' : 'Marked as received.';
    return done(c, `/app/submissions/${encodeURIComponent(id)}`, notice);
  });

  dash.post('/submissions/:id/deliveries/:deliveryId/retry', async (c) => {
    allow(c, deliveryOps.retry);
    const id = c.req.param('id');
    // The submission must be this organization's (404 otherwise), and the delivery one of its own.
    const s = await submissionDetail(c.var.deps, c.var.actor, id);
    const deliveryId = c.req.param('deliveryId');
    if (!s.deliveries.some((d) => d.id === deliveryId)) {
      return page(
        c,
        { title: 'Not found', status: 404 },
        <Empty title="No such delivery">
          <p>
            This submission has no delivery {deliveryId}.{' '}
            <a href={`/app/submissions/${encodeURIComponent(id)}`}>Back to the submission</a>.
          </p>
        </Empty>,
      );
    }
    await retryDelivery(c.var.deps, c.var.actor, deliveryId);
    return done(c, `/app/submissions/${encodeURIComponent(id)}`, 'The delivery is queued again.');
  });
}
