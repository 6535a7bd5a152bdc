import { and, eq, ne, sql } from 'drizzle-orm';
import type { Deps } from '../core/deps.js';
import type { Db } from '../db/client.js';
import type { SubmissionRow } from '../db/rows.js';
import { deliveries, forms, organizations, submissions } from '../db/schema.js';
import { checkConfirmToken, confirmKey } from '../domain/confirm-token.js';
import { appendEvent } from '../events.js';
import { spamPolicyOf } from '../spam/policy.js';
import { dueNowUnlessDisabled } from '../worker/disable.js';
import { SUBMITTER_TARGET } from '../worker/submitter-target.js';
import { planSubmitterMail } from './submitter-mail.js';

/**
 * The double opt-in link (/c/{token}): what it stands for, and its confirmation. A link is used up
 * by the submission's own state: once confirmed it is no longer pending, so a second press finds
 * nothing to confirm. The page's GET only looks (mail scanners follow links); the POST confirms.
 */
export type LinkState =
  | { state: 'pending'; formName: string }
  | { state: 'invalid' }
  | { state: 'expired' }
  | { state: 'used'; formName: string };

const PENDING = and(eq(submissions.status, 'quarantined'), eq(submissions.quarantineReason, 'pending_confirmation'));

async function formName(db: Db, formId: string): Promise<string> {
  const [f] = await db.select({ name: forms.name }).from(forms).where(eq(forms.id, formId));
  return f?.name ?? 'the form';
}

/** What a link stands for now: a pending submission, or why it is no good. Reads only. */
export async function confirmLinkState(deps: Deps, token: string): Promise<LinkState & { submissionId?: string }> {
  const check = checkConfirmToken(await confirmKey(deps.database), token, deps.now());
  if (!check.ok) return { state: check.why };
  const [s] = await deps.database.db
    .select({ formId: submissions.formId, status: submissions.status, reason: submissions.quarantineReason })
    .from(submissions)
    .where(eq(submissions.id, check.submissionId));
  // Deleted unconfirmed (the cleanup), or erased: the link is over.
  if (!s) return { state: 'expired' };
  const name = await formName(deps.database.db, s.formId);
  if (s.status === 'quarantined' && s.reason === 'pending_confirmation') {
    return { state: 'pending', formName: name, submissionId: check.submissionId };
  }
  return { state: 'used', formName: name };
}

/**
 * Confirms the submission behind a link, in one transaction: it becomes `received` with its
 * `confirmation` {confirmed_at, ip, user_agent}, its held deliveries are due now (their snapshot's
 * status says received), `submission.confirmed` is appended and the autoresponder (if any) planned.
 * The update is conditional on the pending state, so two presses at once confirm once.
 */
export async function confirmByLink(
  deps: Deps,
  token: string,
  who: { ip: string; userAgent: string | null },
): Promise<LinkState> {
  const found = await confirmLinkState(deps, token);
  if (found.state !== 'pending' || !found.submissionId) return found;
  const id = found.submissionId;
  const now = deps.now();
  const confirmation = { confirmed_at: now.toISOString(), ip: who.ip, user_agent: who.userAgent };
  const done = await deps.database.db.transaction(async (tx) => {
    const [s] = await tx
      .update(submissions)
      .set({ status: 'received', quarantineReason: null, confirmation })
      .where(and(eq(submissions.id, id), PENDING))
      .returning();
    if (!s) return null;
    const released = await releaseHeld(tx, id, now);
    const mail = await autoresponse(tx, deps, s, now);
    const ev = await appendEvent(tx, {
      orgId: s.orgId,
      type: 'submission.confirmed',
      subject: { submission_id: s.id, form_id: s.formId },
      data: { confirmation, deliveries: [...released, ...mail] },
      now,
    });
    return { planned: released.length + mail.length, dispatched: ev.dispatched };
  });
  if (!done) return { state: 'used', formName: found.formName };
  if (done.planned || done.dispatched) deps.wake();
  return found;
}

/** The route deliveries held for the confirmation: pending and due now, their snapshot's status received. */
async function releaseHeld(tx: Db, submissionId: string, now: Date): Promise<string[]> {
  const rows = await tx
    .update(deliveries)
    .set({
      status: 'pending',
      nextAttemptAt: dueNowUnlessDisabled(now),
      payload: sql`case when ${deliveries.payload}->'submission' is not null
        then jsonb_set(${deliveries.payload}, '{submission,status}', '"received"') else ${deliveries.payload} end`,
    })
    .where(
      and(
        eq(deliveries.submissionId, submissionId),
        eq(deliveries.status, 'held'),
        ne(deliveries.destinationId, SUBMITTER_TARGET),
      ),
    )
    .returning({ id: deliveries.id });
  return rows.map((r) => r.id);
}

/** The autoresponse of a double opt-in form goes out now, after the confirmation (same limits as at intake). */
async function autoresponse(tx: Db, deps: Deps, s: SubmissionRow, now: Date): Promise<string[]> {
  const [f] = await tx
    .select({ id: forms.id, slug: forms.slug, settings: forms.settings, orgSettings: organizations.settings })
    .from(forms)
    .innerJoin(organizations, eq(organizations.id, forms.orgId))
    .where(eq(forms.id, s.formId));
  if (!f) return [];
  const block = spamPolicyOf(f.settings, f.orgSettings).block;
  const input = { config: deps.config, orgId: s.orgId, form: f, block, now };
  const rows = await planSubmitterMail(tx, input, s);
  if (rows.length) await tx.insert(deliveries).values(rows);
  return rows.map((r) => r.id);
}
