import type { FC } from 'hono/jsx';
import type { me } from '../../../services/me.js';
import { Time } from '../../render.js';

/** "12 / 100", "12 (no limit)", with bytes made readable. */
function usage(used: number, limit: number | null, bytes = false): string {
  const f = (n: number) => (bytes ? readableBytes(n) : n.toLocaleString('en'));
  return limit === null ? `${f(used)} (no limit)` : `${f(used)} of ${f(limit)}`;
}
export function readableBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

/** The organization's plan, and its usage against the plan's limits. */
export const PlanCard: FC<{ account: Awaited<ReturnType<typeof me>> }> = ({ account }) => {
  const { limits, organization: org } = account;
  return (
    <section class="card" aria-labelledby="plan-h">
      <h2 id="plan-h">Plan and usage</h2>
      <dl class="meta">
        <dt>Plan</dt>
        <dd>
          <strong>{org.plan}</strong> <span class="muted">({org.plan_source})</span>
          {org.plan_expires_at ? (
            <span>
              {' '}
              until <Time at={org.plan_expires_at} />
            </span>
          ) : null}
          {org.plan_note ? <span> — {org.plan_note}</span> : null}
        </dd>
        <dt>Forms</dt>
        <dd>{usage(limits.used.forms, limits.forms)}</dd>
        <dt>Submissions this month</dt>
        <dd>{usage(limits.used.submissions_this_month, limits.submissions_per_month)}</dd>
        <dt>Destinations</dt>
        <dd>{usage(account.counts.destinations, limits.destinations)}</dd>
        <dt>Attachment storage</dt>
        <dd>{usage(limits.used.attachment_storage_bytes, limits.attachment_storage_bytes, true)}</dd>
        <dt>Retention</dt>
        <dd>{limits.retention_days === null ? 'kept until deleted' : `${limits.retention_days} days`}</dd>
        <dt>Attachments</dt>
        <dd>
          up to {limits.attachments_per_submission} per submission, {readableBytes(limits.attachment_max_bytes)} each
        </dd>
      </dl>
    </section>
  );
};
