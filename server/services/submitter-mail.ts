import { and, eq, exists, gt, ne, or, sql } from 'drizzle-orm';
import { newId } from '../../shared/ids.js';
import { isObj, type Obj } from '../../shared/objects.js';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import type { SubmissionRow } from '../db/rows.js';
import { deliveries, memberships, organizations, users } from '../db/schema.js';
import type { Verdict } from '../domain/checks.js';
import { disposableDomain } from '../spam/disposable.js';
import type { SpamList } from '../spam/lists.js';
import { asEmail, replyToOf } from '../worker/adapters/email.js';
import { SUBMITTER_POLICY } from '../worker/policy.js';
import { SUBMITTER_TARGET } from '../worker/submitter-target.js';

/**
 * Mail to the person who submitted (issue 32): the autoresponse and the double opt-in's
 * confirmation. Each is a delivery of its own under the submission, in the same outbox as route
 * deliveries (destination_id "submitter", route_id the kind), so it is retried, dies after 8
 * attempts like email and shows in the deliveries log. Planned in the intake transaction, after the
 * spam verdict, only for forms that turn one on: the abuse limits cost one indexed count there.
 */
export type MailKind = 'autoresponder' | 'confirmation';

export const DEFAULT_EXPIRES_HOURS = 168;

/** `settings.autoresponder` / `settings.confirm` when enabled (validated when written), else null. */
export function mailSettings(settings: Obj, kind: MailKind): Obj | null {
  const s = settings[kind === 'autoresponder' ? 'autoresponder' : 'confirm'];
  return isObj(s) && s.enabled === true ? s : null;
}

/** Whether a form sends submitter mail at all (intake takes its transactional path for these). */
export const sendsSubmitterMail = (settings: Obj) =>
  mailSettings(settings, 'autoresponder') !== null || mailSettings(settings, 'confirmation') !== null;

/** The submitter's address: `email_field` when named, else Reply-To's rule (reply_to_field, first email). */
export function submitterAddress(settings: Obj, own: Obj, data: Obj): string | null {
  const field = own.email_field;
  const addr = typeof field === 'string' ? asEmail(data[field]) : (replyToOf(settings, data) ?? null);
  return addr ? addr.toLowerCase() : null;
}

/**
 * A received submission of a double opt-in form waits for its submitter: quarantined with reason
 * pending_confirmation. Test submissions (they check the routes) and paused forms are left as they are.
 */
export function confirmVerdict(form: { settings: Obj; status: string }, verdict: Verdict, test: boolean): Verdict {
  if (verdict.status !== 'received' || test || form.status === 'paused') return verdict;
  return mailSettings(form.settings, 'confirmation')
    ? { status: 'quarantined', reason: 'pending_confirmation' }
    : verdict;
}

/** What planning needs besides the stored submission. */
export interface MailPlanInput {
  config: Config;
  orgId: string;
  form: { id: string; slug: string; settings: Obj };
  /** the organization's and the form's merged block list (settings.spam.block) */
  block: SpamList;
  now: Date;
}

/** The submitter-mail deliveries of a stored submission: a confirmation while pending, an autoresponse once received. */
export async function planSubmitterMail(tx: Db, input: MailPlanInput, s: SubmissionRow) {
  const kind: MailKind | null =
    s.status === 'quarantined' && s.quarantineReason === 'pending_confirmation'
      ? 'confirmation'
      : s.status === 'received'
        ? 'autoresponder'
        : null;
  const own = kind ? mailSettings(input.form.settings, kind) : null;
  if (!kind || !own) return [];
  const to = submitterAddress(input.form.settings, own, s.data);
  if (!to) return [];
  // A test submission is answered only at the organization's own addresses: a test is no way to mail strangers.
  if (s.test && !(await isOwnAddress(tx, input.orgId, to))) return [];
  const over = blockedDomain(input.block, to) || (await overLimit(tx, input, kind, to));
  return [mailRow(input, s, kind, to, own, over)];
}

/** A disposable domain or one on the owner's block list (or the very address): never mailed. */
function blockedDomain(block: SpamList, to: string): boolean {
  const domain = to.slice(to.lastIndexOf('@') + 1);
  if (block.emails.has(to) || disposableDomain(domain)) return true;
  const parts = domain.split('.');
  return parts.some((_, i) => block.domains.has(parts.slice(i).join('.')));
}

async function isOwnAddress(tx: Db, orgId: string, to: string): Promise<boolean> {
  const member = tx
    .select({ one: sql`1` })
    .from(memberships)
    .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, users.id)));
  const owner = tx
    .select({ one: sql`1` })
    .from(organizations)
    .where(and(eq(organizations.id, orgId), eq(organizations.ownerUserId, users.id)));
  const rows = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(sql`lower(${users.email}) = ${to}`, or(exists(member), exists(owner))))
    .limit(1);
  return rows.length > 0;
}

/**
 * The abuse limits, counted over the organization's recent submitter mail (deliveries_submitter):
 * AUTORESPONDER_PER_ORG_HOUR per organization per hour, and one autoresponse per address per form
 * within AUTORESPONDER_ADDRESS_HOURS. Skipped ones do not count. The address's lock makes two
 * submissions from one address at once count each other.
 */
async function overLimit(tx: Db, input: MailPlanInput, kind: MailKind, to: string): Promise<boolean> {
  const { config, now } = input;
  const hourAgo = new Date(now.getTime() - 3_600_000);
  const addrSince = new Date(now.getTime() - config.autoresponderAddressHours * 3_600_000);
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`submitter|${input.form.id}|${to}`}, 0))`);
  const perAddress = kind === 'autoresponder' && config.autoresponderAddressHours > 0;
  const since = perAddress && addrSince < hourAgo ? addrSince : hourAgo;
  const sameAddress = and(
    eq(deliveries.formId, input.form.id),
    eq(deliveries.routeId, kind),
    gt(deliveries.createdAt, addrSince),
    sql`${deliveries.payload}->>'to' = ${to}`,
  );
  const [row] = await tx
    .select({
      org: sql<number>`count(*) filter (where ${gt(deliveries.createdAt, hourAgo)})`,
      address: perAddress ? sql<number>`count(*) filter (where ${sameAddress})` : sql<number>`0`,
    })
    .from(deliveries)
    .where(
      and(
        eq(deliveries.orgId, input.orgId),
        eq(deliveries.destinationId, SUBMITTER_TARGET),
        gt(deliveries.createdAt, since),
        ne(deliveries.status, 'skipped'),
      ),
    );
  return Number(row.org) >= config.autoresponderPerOrgHour || Number(row.address) > 0;
}

function mailRow(input: MailPlanInput, s: SubmissionRow, kind: MailKind, to: string, own: Obj, over: boolean) {
  const id = newId('delivery');
  const hours = typeof own.expires_hours === 'number' ? own.expires_hours : DEFAULT_EXPIRES_HOURS;
  const payload: Record<string, unknown> = {
    id,
    type: `submitter.${kind}`,
    to,
    form: { id: input.form.id, slug: input.form.slug },
    submission: { id: s.id, status: s.status, test: s.test, received_at: s.receivedAt.toISOString() },
    data: s.data,
    meta: s.meta,
  };
  if (kind === 'confirmation') payload.expires_at = new Date(s.receivedAt.getTime() + hours * 3_600_000).toISOString();
  return {
    id,
    orgId: input.orgId,
    submissionId: s.id,
    routeId: kind,
    destinationId: SUBMITTER_TARGET,
    destinationType: SUBMITTER_TARGET,
    formId: input.form.id,
    status: over ? 'skipped' : 'pending',
    skipReason: over ? ('limit' as const) : null,
    maxAttempts: SUBMITTER_POLICY.maxAttempts,
    nextAttemptAt: over ? null : input.now,
    schemaVersion: null,
    payload,
    createdAt: input.now,
  };
}
