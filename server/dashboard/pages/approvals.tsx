import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { destinationOps } from '../../../shared/contracts/destinations.js';
import {
  approvalDetails,
  approveDestination,
  pendingDestinations,
  rejectDestination,
  targetOf,
} from '../../services/destination-approval.js';
import type { DashEnv } from '../env.js';
import { allow } from '../input.js';
import { done, Empty, PostForm, page, Time } from '../render.js';

type Details = Awaited<ReturnType<typeof approvalDetails>>;

/**
 * Approvals (settings.approve_destinations "keys"): the destinations an API key created or
 * re-pointed, waiting for an owner or admin. Each page shows where data would go (the host and what
 * it resolves to now), who asked, what feeds it and a sample payload; Approve sends what waited,
 * Reject deletes it and skips what waited. Every value is escaped by JSX; the buttons carry CSRF.
 */
export function registerApprovalPages(dash: Hono<DashEnv>) {
  dash.get('/approvals', async (c) => {
    allow(c, destinationOps.approve);
    const rows = await pendingDestinations(c.var.deps.database.db, c.var.actor.orgId);
    return page(
      c,
      { title: 'Approvals', section: 'destinations' },
      <>
        <h1>Approvals</h1>
        <p>
          Destinations an API key created or pointed somewhere new. Nothing is sent to them until you approve; their
          deliveries wait.
        </p>
        {rows.length ? (
          <ul class="plain" id="approval-list">
            {rows.map((d) => (
              <li>
                <a href={`/app/approvals/${d.id}`}>{d.name}</a> ({d.type}) — asked by{' '}
                {d.approvalKeyName ?? 'an API key'} <Time at={d.approvalRequestedAt} />
              </li>
            ))}
          </ul>
        ) : (
          <Empty title="Nothing waits for approval">
            <p>
              <a href="/app/destinations">Destinations</a>
            </p>
          </Empty>
        )}
      </>,
    );
  });

  dash.get('/approvals/:id', async (c) => {
    allow(c, destinationOps.approve);
    const details = await approvalDetails(c.var.deps, c.var.actor, c.req.param('id'));
    return page(
      c,
      { title: `Approve ${details.row.name}`, section: 'destinations' },
      <ApprovalPage c={c} d={details} />,
    );
  });

  dash.post('/approvals/:id/approve', async (c) => {
    allow(c, destinationOps.approve);
    const row = await approveDestination(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, `/app/destinations/${row.id}`, 'Approved: its waiting deliveries are sent now.');
  });

  dash.post('/approvals/:id/reject', async (c) => {
    allow(c, destinationOps.reject);
    await rejectDestination(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/approvals', 'Rejected: the destination and its routes are deleted; what waited is skipped.');
  });
}

const ApprovalPage: FC<{ c: Context<DashEnv>; d: Details }> = ({ c, d }) => {
  const { row } = d;
  const pending = row.approval === 'pending';
  return (
    <>
      <p>
        <a href="/app/approvals">← Approvals</a>
      </p>
      <h1>{row.name}</h1>
      {pending ? null : (
        <p class="notice" role="status" id="approval-state">
          This destination is approved: <a href={`/app/destinations/${row.id}`}>see it</a>.
        </p>
      )}
      <section class="card" aria-labelledby="target-title">
        <h2 id="target-title">Where data would go</h2>
        <dl class="meta" id="approval-target">
          <dt>Type</dt>
          <dd>{row.type}</dd>
          <TargetLines target={targetOf(row.type, row.config)} />
          {d.resolved ? (
            <>
              <dt>Host</dt>
              <dd id="approval-host">{d.resolved.host}</dd>
              <dt>Resolves now to</dt>
              <dd id="approval-addresses">
                {d.resolved.error
                  ? `no address (${d.resolved.error})`
                  : d.resolved.addresses.map((a) => `${a.address}${a.kind ? ` [${a.kind}]` : ''}`).join(', ')}
              </dd>
            </>
          ) : null}
          <dt>Asked by</dt>
          <dd id="approval-asked-by">
            {row.approvalKeyName ? `API key "${row.approvalKeyName}"` : 'an API key'}{' '}
            <Time at={row.approvalRequestedAt} />
          </dd>
          <dt>Waiting deliveries</dt>
          <dd id="approval-waiting">{d.waiting}</dd>
        </dl>
      </section>
      <Feeds feeds={d.feeds} />
      <section class="card" aria-labelledby="sample-title">
        <h2 id="sample-title">{d.sampleIsReal ? 'The first waiting payload' : 'A sample payload'}</h2>
        <pre id="approval-sample">{JSON.stringify(d.sample, null, 2)}</pre>
      </section>
      {pending ? (
        <section class="card" aria-labelledby="decide-title">
          <h2 id="decide-title">Decide</h2>
          <PostForm c={c} action={`/app/approvals/${row.id}/approve`} class="inline">
            <button type="submit" id="approve">
              Approve and send what waited
            </button>
          </PostForm>{' '}
          <PostForm
            c={c}
            action={`/app/approvals/${row.id}/reject`}
            class="inline"
            confirm="Delete this destination and its routes, and skip what waited?"
          >
            <button type="submit" class="danger" id="reject">
              Reject and delete
            </button>
          </PostForm>
        </section>
      ) : null}
    </>
  );
};

/** The forms and streams whose routes send to it. */
const Feeds: FC<{ feeds: Details['feeds'] }> = ({ feeds }) => (
  <section class="card" aria-labelledby="feeds-title">
    <h2 id="feeds-title">What feeds it</h2>
    {feeds.length ? (
      <ul class="plain" id="approval-feeds">
        {feeds.map((f) =>
          f.formId ? (
            <li>
              Form <a href={`/app/forms/${f.formId}`}>{f.formName ?? f.formId}</a>
            </li>
          ) : (
            <li>
              Stream <a href={`/app/streams/${f.streamId}`}>{f.streamName ?? f.streamId}</a>
            </li>
          ),
        )}
      </ul>
    ) : (
      <p>No route sends to it yet.</p>
    )}
  </section>
);

/** The target fields as definition lines: recipients, chat or URL. */
const TargetLines: FC<{ target: Record<string, unknown> }> = ({ target }) => (
  <>
    {Object.entries(target).map(([k, v]) => (
      <>
        <dt>{k === 'to' ? 'Recipients' : k === 'cc' ? 'Cc' : k === 'chat_id' ? 'Chat' : 'URL'}</dt>
        <dd>{Array.isArray(v) ? v.join(', ') || '—' : String(v ?? '—')}</dd>
      </>
    ))}
  </>
);
