import dns from 'node:dns/promises';
import { and, asc, count, eq, inArray } from 'drizzle-orm';
import { ops } from '../../shared/contracts/index.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import type { Db } from '../db/client.js';
import type { DestinationRow } from '../db/rows.js';
import {
  apiKeys,
  deliveries,
  destinations,
  forms,
  memberships,
  organizations,
  routes,
  streams,
  users,
} from '../db/schema.js';
import { appendEvent } from '../events.js';
import { CREDENTIAL_URL_TYPES, redactedUrl } from '../present/destinations.js';
import { escapeHtml } from '../present/html.js';
import { parkRows, resumeRows } from '../worker/disable.js';
import { blockedKind } from '../worker/ssrf.js';
import { sampleMessage } from './destination-sample.js';
import { routeOf } from './next-steps.js';

/**
 * New outbound targets wait for a person (settings.approve_destinations "keys", an extension): a
 * destination created or re-pointed by anything but a dashboard session (an API key, or later an
 * OAuth token acting for one) is `approval = 'pending'`. Its deliveries are planned and wait as a
 * disabled destination's do (pending, next_attempt_at null); an owner or admin approves it in the
 * dashboard (they are due at once) or rejects it (deleted, they are skipped `rejected`).
 */

/** Where a person approves: the dashboard page of one destination waiting. */
export const approvalPath = (id: string) => `/app/approvals/${id}`;

/** The organization's setting: "keys" asks a person about targets keys set; "never" (default) does not. */
export async function approvalSetting(db: Db, orgId: string): Promise<'never' | 'keys'> {
  const [org] = await db
    .select({ settings: organizations.settings })
    .from(organizations)
    .where(eq(organizations.id, orgId))
    .limit(1);
  return (org?.settings as { approve_destinations?: unknown } | null)?.approve_destinations === 'keys'
    ? 'keys'
    : 'never';
}

/** Whether this caller's new or re-pointed target waits for a person: anything but a session does. */
export const mustWait = (actor: Actor, setting: 'never' | 'keys') => setting === 'keys' && actor.kind !== 'session';

/**
 * System webhooks do not wait for approval (yet): under "keys" a key may not create or re-point one
 * at all, so the setting cannot be side-stepped through the event stream.
 */
export async function refuseKeyHook(deps: Deps, actor: Actor): Promise<void> {
  if (!mustWait(actor, await approvalSetting(deps.database.db, actor.orgId))) return;
  throw new ApiError(
    'forbidden',
    'This organization asks a person to approve new outbound targets (settings.approve_destinations "keys"); an API key cannot create or re-point a system webhook.',
    {
      hint: 'Ask an owner or admin to create or change it while signed in (the same request with the session cookie).',
    },
  );
}

/** The fields of a config that say where data goes (not its name, template or secret). */
export function targetOf(type: string, config: Record<string, unknown>): Record<string, unknown> {
  if (type === 'email') return { to: config.to ?? [], cc: config.cc ?? [] };
  if (type === 'telegram') return { chat_id: config.chat_id ?? null };
  // A chat webhook URL is its own credential: its host and last characters only, as every reader sees it.
  return { url: CREDENTIAL_URL_TYPES.includes(type) ? redactedUrl(config.url) : (config.url ?? null) };
}

/** True when a config change points the destination somewhere else (URL, chat, recipients); compares the stored values. */
export function repointed(type: string, before: Record<string, unknown>, after: Record<string, unknown>) {
  const raw = (c: Record<string, unknown>) =>
    type === 'email' ? [c.to ?? [], c.cc ?? []] : type === 'telegram' ? [c.chat_id] : [c.url];
  return JSON.stringify(raw(before)) !== JSON.stringify(raw(after));
}

/**
 * Marks a destination as waiting for a person (inside the caller's transaction): who asked, when;
 * its queued deliveries wait, and `destination.approval_requested` is appended. Returns the row.
 */
export async function requestApproval(tx: Db, deps: Deps, actor: Actor, id: string): Promise<DestinationRow> {
  const [key] = actor.keyId
    ? await tx.select({ name: apiKeys.name }).from(apiKeys).where(eq(apiKeys.id, actor.keyId)).limit(1)
    : [];
  const now = deps.now();
  const [row] = await tx
    .update(destinations)
    .set({
      approval: 'pending',
      approvalKeyId: actor.keyId ?? null,
      approvalKeyName: key?.name ?? actor.keyPrefix ?? null,
      approvalRequestedAt: now,
    })
    .where(and(eq(destinations.id, id), eq(destinations.orgId, actor.orgId)))
    .returning();
  if (!row) throw notFound('destination', id);
  await parkRows(tx, 'delivery', id);
  await appendEvent(tx, {
    orgId: actor.orgId,
    type: 'destination.approval_requested',
    subject: { destination_id: id },
    data: {
      type: row.type,
      name: row.name,
      target: targetOf(row.type, row.config),
      key_id: row.approvalKeyId,
      key_name: row.approvalKeyName,
    },
    now,
  });
  return row;
}

/** The organization's owners and admins (who are asked). */
async function approvers(db: Db, orgId: string) {
  return db
    .select({ email: users.email, name: users.name })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.orgId, orgId), inArray(memberships.role, ['owner', 'admin'])));
}

/** One line of a mail header or a text line: no control characters, so a name cannot add lines. */
const oneLine = (s: unknown) =>
  String(s ?? '')
    .replace(/[\p{Cc}\s]+/gu, ' ')
    .trim();

/** The mail that asks owners and admins; every value in the HTML part is escaped. */
export function approvalMail(base: string, row: DestinationRow, orgName: string, to: string[]) {
  const url = `${base}${approvalPath(row.id)}`;
  const who = row.approvalKeyName ? `The API key "${oneLine(row.approvalKeyName)}"` : 'An API key';
  const target = JSON.stringify(targetOf(row.type, row.config));
  const lines = [
    `${who} pointed the ${row.type} destination "${oneLine(row.name)}" of ${oneLine(orgName)} at a new target:`,
    `  ${oneLine(target)}`,
    '',
    'Nothing is sent there until an owner or admin approves it; its deliveries wait.',
    `Approve or reject it: ${url}`,
  ];
  return {
    to,
    subject: `Approve a new ${row.type} destination: ${oneLine(row.name)}`.slice(0, 200),
    text: lines.join('\n'),
    html:
      `<p>${escapeHtml(lines[0])}</p><p><code>${escapeHtml(target)}</code></p>` +
      `<p>${escapeHtml(lines[3])}</p><p><a href="${escapeHtml(url)}">Approve or reject it</a></p>`,
  };
}

/** Mails every owner and admin the approval link (after the commit; a failed send is logged). */
export async function mailApprovers(deps: Deps, row: DestinationRow): Promise<void> {
  const db = deps.database.db;
  const [org] = await db
    .select({ name: organizations.name })
    .from(organizations)
    .where(eq(organizations.id, row.orgId));
  const to = (await approvers(db, row.orgId)).map((a) => a.email);
  if (!to.length) return;
  const sent = await deps.mailer.send(approvalMail(deps.config.publicBaseUrl, row, org?.name ?? row.orgId, to));
  if (!sent.ok) deps.log.warn({ destination: row.id, error: sent.error }, 'approval mail not sent');
}

/** The refusal of a test (or anything that would send) while a destination waits for a person. */
export function approvalPending(deps: Deps, id: string) {
  return new ApiError(
    'approval_pending',
    `Destination ${id} waits for an owner or admin to approve it; nothing is sent to it until then.`,
    {
      hint: `An owner or admin approves it in the dashboard at ${deps.config.publicBaseUrl}${approvalPath(id)} (they were mailed the link); its deliveries wait and are sent once it is approved.`,
      details: { approval: 'pending', approve_url: `${deps.config.publicBaseUrl}${approvalPath(id)}` },
    },
  );
}

/** The pending row of the organization, locked; 404 for another organization's id, 409 when not pending. */
async function lockPending(tx: Db, orgId: string, id: string) {
  const [row] = await tx
    .select()
    .from(destinations)
    .where(and(eq(destinations.id, id), eq(destinations.orgId, orgId)))
    .for('update');
  if (!row) throw notFound('destination', id);
  if (row.approval !== 'pending') {
    throw new ApiError('conflict', `Destination ${id} is not waiting for approval.`, {
      hint: `Nothing to decide: it is approved already (${routeOf(ops.destinations.get)} shows it).`,
    });
  }
  return row;
}

/** Approves a waiting destination (owner or admin session): its waiting deliveries are due now. */
export async function approveDestination(deps: Deps, actor: Actor, id: string): Promise<DestinationRow> {
  const now = deps.now();
  const row = await deps.database.db.transaction(async (tx) => {
    await lockPending(tx, actor.orgId, id);
    const [updated] = await tx.update(destinations).set({ approval: null }).where(eq(destinations.id, id)).returning();
    const released = updated.enabled ? await resumeRows(tx, 'delivery', id, now) : 0;
    await appendEvent(tx, {
      orgId: actor.orgId,
      type: 'destination.approved',
      subject: { destination_id: id },
      data: { by_user_id: actor.userId ?? null, key_name: updated.approvalKeyName, released },
      now,
    });
    return updated;
  });
  deps.wake();
  return row;
}

/**
 * Rejects a waiting destination (owner or admin session): what waited for it is skipped
 * (`rejected`), its routes and the destination are deleted.
 */
export async function rejectDestination(deps: Deps, actor: Actor, id: string): Promise<void> {
  const now = deps.now();
  const dispatched = await deps.database.db.transaction(async (tx) => {
    const row = await lockPending(tx, actor.orgId, id);
    const skipped = await tx
      .update(deliveries)
      .set({ status: 'skipped', skipReason: 'rejected', nextAttemptAt: null, leaseUntil: null })
      .where(and(eq(deliveries.destinationId, id), inArray(deliveries.status, ['pending', 'failed', 'held'])))
      .returning({ id: deliveries.id });
    const removed = await tx
      .delete(routes)
      .where(and(eq(routes.orgId, actor.orgId), eq(routes.destinationId, id)))
      .returning({ id: routes.id });
    await tx.delete(destinations).where(eq(destinations.id, id));
    const ev = await appendEvent(tx, {
      orgId: actor.orgId,
      type: 'destination.rejected',
      subject: { destination_id: id },
      data: {
        by_user_id: actor.userId ?? null,
        name: row.name,
        target: targetOf(row.type, row.config),
        key_name: row.approvalKeyName,
        skipped: skipped.length,
        routes_deleted: removed.map((r) => r.id),
      },
      now,
    });
    return ev.dispatched;
  });
  if (dispatched) deps.wake();
}

/** How many destinations of the organization wait (the dashboard's banner). */
export async function pendingCount(db: Db, orgId: string): Promise<number> {
  const [{ n }] = await db
    .select({ n: count() })
    .from(destinations)
    .where(and(eq(destinations.orgId, orgId), eq(destinations.approval, 'pending')));
  return Number(n);
}

/** The waiting destinations of the organization, oldest request first. */
export async function pendingDestinations(db: Db, orgId: string) {
  return db
    .select()
    .from(destinations)
    .where(and(eq(destinations.orgId, orgId), eq(destinations.approval, 'pending')))
    .orderBy(asc(destinations.approvalRequestedAt));
}

/** One address a target's host resolves to now, with its class when it is not public. */
export interface ResolvedAddress {
  address: string;
  /** null: a public address; otherwise the guard's class ("loopback", "private", …) */
  kind: string | null;
}

/**
 * What the host of a URL resolves to now (the same lookup the SSRF guard makes when it connects).
 * A non-public address is shown by its class only unless the operator allows private targets, so
 * the page never maps the server's own network for a tenant.
 */
export async function resolveHost(deps: Deps, url: unknown) {
  if (typeof url !== 'string') return null;
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return null;
  }
  try {
    const found = await dns.lookup(host, { all: true });
    const addresses: ResolvedAddress[] = found.map((a) => {
      const kind = blockedKind(a.address);
      const shown = kind && !deps.config.outboundAllowPrivate ? `(a ${kind} address)` : a.address;
      return { address: shown, kind };
    });
    return { host, addresses, error: null };
  } catch (err) {
    return { host, addresses: [], error: (err as NodeJS.ErrnoException).code ?? 'lookup failed' };
  }
}

/** What the approval page shows of one waiting destination: target, who asked, what feeds it, a sample. */
export async function approvalDetails(deps: Deps, actor: Actor, id: string) {
  const db = deps.database.db;
  const [row] = await db
    .select()
    .from(destinations)
    .where(and(eq(destinations.id, id), eq(destinations.orgId, actor.orgId)))
    .limit(1);
  if (!row) throw notFound('destination', id);
  const feeds = await db
    .select({
      routeId: routes.id,
      formId: routes.formId,
      formName: forms.name,
      streamId: routes.streamId,
      streamName: streams.name,
    })
    .from(routes)
    .leftJoin(forms, eq(forms.id, routes.formId))
    .leftJoin(streams, eq(streams.id, routes.streamId))
    .where(and(eq(routes.orgId, actor.orgId), eq(routes.destinationId, id)));
  const [waiting] = await db
    .select({ n: count() })
    .from(deliveries)
    .where(and(eq(deliveries.destinationId, id), eq(deliveries.status, 'pending')));
  const [oldest] = await db
    .select({ payload: deliveries.payload })
    .from(deliveries)
    .where(and(eq(deliveries.destinationId, id), eq(deliveries.status, 'pending')))
    .orderBy(asc(deliveries.id))
    .limit(1);
  return {
    row,
    target: targetOf(row.type, row.config),
    resolved: await resolveHost(deps, row.config.url),
    feeds,
    waiting: Number(waiting.n),
    sample: oldest?.payload ?? sampleMessage(deps.now(), id).payload,
    sampleIsReal: Boolean(oldest),
  };
}
