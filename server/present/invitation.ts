import type { z } from '../../shared/contracts/common.js';
import { INVITATION_TTL_DAYS, type Invitation } from '../../shared/contracts/invitations.js';
import type { invitations, users } from '../db/schema.js';

export type InvitationWithInviter = { i: typeof invitations.$inferSelect; by: typeof users.$inferSelect | null };

/** "alice@example.com" → "a***@e***.com": enough to recognise one's own address, not to learn it. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const labels = email.slice(at + 1).split('.');
  const tld = labels.length > 1 ? `.${labels[labels.length - 1]}` : '';
  return `${local.slice(0, 1)}***@${labels[0].slice(0, 1)}***${tld}`;
}

/** Invitation as its organization sees it (the public view is built in the service, masked). */
export type InvitationOut = z.output<typeof Invitation>;

export function presentInvitation({ i, by }: InvitationWithInviter): InvitationOut {
  return {
    id: i.id,
    email: i.email,
    role: i.role as InvitationOut['role'],
    expires_at: i.expiresAt.toISOString(),
    invited_by: by ? { id: by.id, name: by.name, email: by.email } : null,
    created_at: i.createdAt.toISOString(),
  };
}

/** The invitation mail: who invites, to what, the link, and the steps to accept (agents read it too). */
export function invitationMail(base: string, { i, by }: InvitationWithInviter, orgName: string, url: string) {
  const who = by ? `${by.name} (${by.email})` : 'An administrator';
  return {
    to: [i.email],
    subject: `You are invited to join ${orgName.replace(/\s+/g, ' ')}`,
    text: [
      `${who} invited you to join the organization "${orgName}" as ${i.role}.`,
      '',
      `Invitation: ${url}`,
      `Accept in the browser: ${base}/app/invitations/${i.id}`,
      `It expires at ${i.expiresAt.toISOString()} (${INVITATION_TTL_DAYS} days).`,
      '',
      `To accept, sign in as ${i.email} and accept with the session cookie:`,
      `1. POST ${base}/v1/auth/request-code {"email": "${i.email}"} mails you a code.`,
      `2. POST ${base}/v1/auth/sign-in {"email": "${i.email}", "code": "<the code>"} sets the session cookie.`,
      `3. POST ${url}/accept with that cookie.`,
      `4. POST ${base}/v1/organizations/${i.orgId}/switch to work in it.`,
      '',
      'If you did not expect this invitation, ignore this mail.',
    ].join('\n'),
  };
}
