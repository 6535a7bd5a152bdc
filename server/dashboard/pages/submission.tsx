import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { deliveryOps } from '../../../shared/contracts/deliveries.js';
import { submissionOps } from '../../../shared/contracts/submissions.js';
import type { ExplanationOut } from '../../present/explain.js';
import { retryDelivery } from '../../services/deliveries.js';
import { explainSubmission } from '../../services/explain.js';
import { namesOf } from '../../services/names.js';
import { submissionDetail, updateSubmission } from '../../services/submissions.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor } from '../input.js';
import { Badge, done, Empty, PostForm, page, Time } from '../render.js';
import {
  AttachmentsCard,
  DeliveriesCard,
  type Detail,
  DetailsCard,
  DriftCard,
  FieldsCard,
  IssuesCard,
  SpamCard,
} from './submission/cards.js';
import { WhyCard } from './submission/why.js';

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
      {s.status === 'received' ? (
        // Already received, it changes no status: it teaches the filter that this one is fine.
        <PostForm c={c} action={action}>
          <input type="hidden" name="status" value="received" />
          <button type="submit" class="secondary" title="Teach the spam filter that this submission is fine">
            Not spam
          </button>
        </PostForm>
      ) : null}
    </div>
  );
};

function SubmissionPage({
  c,
  s,
  formName,
  dest,
  why,
}: {
  c: Context<DashEnv>;
  s: Detail;
  formName?: string;
  dest: Map<string, string>;
  why: ExplanationOut;
}) {
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

      <WhyCard e={why} />

      <FieldsCard s={s} />

      <SpamCard s={s} />

      <IssuesCard s={s} />

      <AttachmentsCard s={s} />

      <DeliveriesCard c={c} s={s} dest={dest} />

      <DriftCard s={s} />

      <DetailsCard s={s} />
    </>
  );
}

/** One submission: its fields as text, files, deliveries with Retry, drift, and reclassification. */
export function registerSubmissionPages(dash: Hono<DashEnv>): void {
  dash.get('/submissions/:id', async (c) => {
    allow(c, submissionOps.get);
    const { deps, actor } = c.var;
    const s = await submissionDetail(deps, actor, c.req.param('id'));
    const [form, dest, why] = await Promise.all([
      namesOf(deps, actor, 'forms', [s.form_id]),
      namesOf(
        deps,
        actor,
        'destinations',
        s.deliveries.map((d) => d.destination_id),
      ),
      explainSubmission(deps, actor, s.id),
    ]);
    return page(
      c,
      { title: `Submission ${s.id}`, section: 'inbox' },
      <SubmissionPage c={c} s={s} formName={form.get(s.form_id)} dest={dest} why={why} />,
    );
  });

  dash.post('/submissions/:id/status', async (c) => {
    allow(c, submissionOps.update);
    const form = await c.req.parseBody();
    const body = bodyFor(submissionOps.update, { status: form.status });
    const id = c.req.param('id');
    const s = await updateSubmission(c.var.deps, c.var.actor, id, body);
    const notice = s.status === 'spam' ? 'Marked as spam.' : 'Marked as received (not spam).';
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
