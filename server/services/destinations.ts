import net from 'node:net';
import { and, count, desc, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import {
  CONFIG_SCHEMAS,
  type CreateDestinationBody,
  type DestinationCreated,
  type DestinationListQuery,
  type DestinationType,
  type DestinationUpdated,
  REDACTED,
  type UpdateDestinationBody,
} from '../../shared/contracts/destinations.js';
import { ops } from '../../shared/contracts/index.js';
import { newId } from '../../shared/ids.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError, notFound } from '../core/errors.js';
import { type Page, pageResult } from '../core/pagination.js';
import type { Db } from '../db/client.js';
import type { DestinationRow } from '../db/rows.js';
import { destinations, organizations, routes } from '../db/schema.js';
import { limitsOf } from '../domain/orgs.js';
import { CREDENTIAL_URL_TYPES, presentDestination, redactedUrl, SECRET_KEYS } from '../present/destinations.js';
import { setDestinationEnabled } from '../worker/disable.js';
import { blockedKind } from '../worker/ssrf.js';
import { approvalSetting, mailApprovers, mustWait, repointed, requestApproval } from './destination-approval.js';
import { routeOf } from './next-steps.js';

export type { DestinationRow } from '../db/rows.js';

type Config = Record<string, unknown>;

/**
 * The non-public class of a "localhost" name or a literal non-public IP (the SSRF guard's ranges), or
 * null: refused at create time in production; names are checked again on their resolved address at
 * connect time.
 */
export function privateHostKind(hostname: string): string | null {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  return net.isIP(host) !== 0 ? blockedKind(host) : null;
}

const invalid = (message: string, issues: { path: string; message: string }[], hint?: string) =>
  new ApiError('validation_failed', message, { details: { issues }, ...(hint ? { hint } : {}) });

/**
 * Validates a whole config against its type's schema, then normalizes it for storage
 * (telegram chat_id as a string, the slack/discord URL under `url`) and applies the outbound guard.
 */
function checkConfig(deps: Deps, type: DestinationType, config: Config): Config {
  const parsed = CONFIG_SCHEMAS[type].safeParse(config);
  if (!parsed.success) {
    throw invalid(
      `The ${type} config has invalid fields.`,
      parsed.error.issues.map((i) => ({ path: ['config', ...i.path.map(String)].join('.'), message: i.message })),
    );
  }
  const out: Config = { ...(parsed.data as Config) };
  if (type === 'telegram') out.chat_id = String(out.chat_id);
  if (type === 'slack' || type === 'discord') {
    out.url = out.url ?? out.webhook_url;
    delete out.webhook_url;
  }
  const guarded = deps.config.production && !deps.config.outboundAllowPrivate;
  if (guarded && typeof out.url === 'string') {
    const kind = privateHostKind(new URL(out.url).hostname);
    if (kind) {
      throw invalid(
        `The ${type} URL points at a non-public address (${kind}).`,
        [{ path: 'config.url', message: `a ${kind} address is not reachable from this server` }],
        'Use a public URL; this server refuses private addresses (the operator can set OUTBOUND_ALLOW_PRIVATE=true).',
      );
    }
  }
  // A chat webhook URL carries its own credential: in production it never travels in clear text.
  if (deps.config.production && CHAT_HOSTS[type] && typeof out.url === 'string' && !out.url.startsWith('https:')) {
    throw invalid(
      `The ${type} incoming-webhook URL must use https.`,
      [{ path: 'config.url', message: 'must start with https://' }],
      `Copy the URL ${type === 'slack' ? 'Slack' : 'Discord'} shows for the webhook; it starts with https://.`,
    );
  }
  return out;
}

/** Where each chat provider's incoming webhooks live: a URL elsewhere is accepted with a warning. */
const CHAT_HOSTS: Partial<Record<DestinationType, { hosts: string[]; pathPrefix: string; name: string }>> = {
  slack: { hosts: ['hooks.slack.com'], pathPrefix: '/', name: 'Slack' },
  discord: { hosts: ['discord.com', 'discordapp.com'], pathPrefix: '/api/webhooks/', name: 'Discord' },
};

/**
 * A warning when a Slack or Discord URL is not on the provider's usual webhook host (a proxy, a
 * relay or a test receiver is allowed, but a typo should not go unnoticed); none otherwise.
 */
export function chatUrlWarnings(type: DestinationType, config: Config): string[] {
  const expected = CHAT_HOSTS[type];
  if (!expected || typeof config.url !== 'string') return [];
  const url = new URL(config.url);
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (expected.hosts.includes(host) && url.pathname.startsWith(expected.pathPrefix)) return [];
  const usual = expected.hosts.map((h) => `https://${h}${expected.pathPrefix}…`).join(' or ');
  return [
    // The origin only: the path of a chat webhook URL is its credential.
    `The ${type} URL points at ${url.origin}, not ${usual} where ${expected.name} ` +
      `webhooks live. It was accepted and messages will be posted there in ${expected.name}'s format; check the URL if that is not what you meant.`,
  ];
}

const isRedactedUrl = (stored: unknown, value: unknown) =>
  value === REDACTED || (typeof stored === 'string' && value === redactedUrl(stored));

/** PATCH merge: a key set to null is removed; a secret (or header value) left out or sent as REDACTED is kept. */
function mergeConfig(type: DestinationType, stored: Config, given: Config): Config {
  const patch: Config = { ...given };
  // A chat URL read back (redacted) and sent again means the stored one: it is kept.
  if (CREDENTIAL_URL_TYPES.includes(type)) {
    for (const k of ['url', 'webhook_url']) if (isRedactedUrl(stored.url, patch[k])) delete patch[k];
  }
  const out: Config = { ...stored };
  if ((type === 'slack' || type === 'discord') && patch.webhook_url != null) delete out.url;
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (SECRET_KEYS.includes(key) && value === REDACTED) continue;
    else if (key === 'headers' && typeof value === 'object' && !Array.isArray(value)) {
      const old = (stored.headers ?? {}) as Record<string, unknown>;
      out.headers = Object.fromEntries(
        Object.entries(value as Config)
          .map(([name, v]) => [name, v === REDACTED ? old[name] : v])
          .filter(([, v]) => v !== undefined),
      );
    } else out[key] = value;
  }
  return out;
}

/** The origin (scheme, host and port) of a stored URL; null when there is none. */
function originOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * A stored secret and stored header values belong to the receiver they were given for: when a PATCH
 * moves the URL to another origin, whatever the same request does not give again is dropped (a
 * header sent as REDACTED counts as not given), so a key cannot point them at a receiver of its own
 * and read them there. Returns the config to store and a warning naming what was dropped.
 */
export function forgetOnMove(stored: Config, patch: Config, merged: Config): { config: Config; warnings: string[] } {
  const from = originOf(stored.url);
  const to = originOf(merged.url);
  if (!from || !to || from === to) return { config: merged, warnings: [] };
  const out: Config = { ...merged };
  const dropped: string[] = [];
  const given = (v: unknown) => typeof v === 'string' && v !== REDACTED;
  for (const key of SECRET_KEYS) {
    if (out[key] !== undefined && !given(patch[key])) {
      delete out[key];
      dropped.push(key);
    }
  }
  if (out.headers && typeof out.headers === 'object') {
    const sent = (patch.headers && typeof patch.headers === 'object' ? patch.headers : {}) as Config;
    const kept = Object.entries(out.headers as Config).filter(([name]) => given(sent[name]));
    const lost = Object.keys(out.headers as Config).filter((name) => !given(sent[name]));
    if (lost.length) dropped.push(`the values of header${lost.length > 1 ? 's' : ''} ${lost.join(', ')}`);
    if (kept.length) out.headers = Object.fromEntries(kept);
    else delete out.headers;
  }
  if (!dropped.length) return { config: out, warnings: [] };
  return {
    config: out,
    warnings: [
      `The URL moved from ${from} to ${to}, so the stored ${dropped.join(' and ')} ${dropped.length > 1 ? 'were' : 'was'} dropped: ` +
        'stored secrets never follow a URL to another host. Give them again in the same PATCH as the new URL to keep them.',
    ],
  };
}

/** Creates a destination; the plan's destination limit is checked under a lock on the organization row. */
export async function createDestination(
  deps: Deps,
  actor: Actor,
  body: z.output<typeof CreateDestinationBody>,
): Promise<z.output<typeof DestinationCreated>> {
  const config = checkConfig(deps, body.type, body.config);
  const row = await deps.database.db.transaction(async (tx) => {
    const [org] = await tx.select().from(organizations).where(eq(organizations.id, actor.orgId)).for('update');
    const max = limitsOf(deps.config, org, deps.now()).destinations;
    if (max !== null) {
      const [{ n }] = await tx.select({ n: count() }).from(destinations).where(eq(destinations.orgId, actor.orgId));
      if (Number(n) >= max) {
        throw new ApiError('plan_limit_reached', `The plan allows ${max} destinations and the organization has ${n}.`, {
          hint: `Delete a destination you no longer use, or move to a larger plan (${routeOf(ops.me.get)} shows limits).`,
          details: { limit: 'destinations', max, used: Number(n) },
        });
      }
    }
    const [inserted] = await tx
      .insert(destinations)
      .values({ id: newId('destination'), orgId: actor.orgId, type: body.type, name: body.name, config })
      .returning();
    // settings.approve_destinations "keys": a key's new target waits for a person.
    const setting = (org.settings as { approve_destinations?: unknown } | null)?.approve_destinations;
    if (!mustWait(actor, setting === 'keys' ? 'keys' : 'never')) return inserted;
    return requestApproval(tx, deps, actor, inserted.id);
  });
  if (row.approval === 'pending') await mailApprovers(deps, row);
  const warnings = chatUrlWarnings(body.type, config);
  return { ...presentDestination(row), ...(warnings.length ? { warnings } : {}) };
}

export async function listDestinations(
  deps: Deps,
  actor: Actor,
  page: Page,
  filter: Pick<z.output<typeof DestinationListQuery>, 'type'>,
) {
  const conds = [eq(destinations.orgId, actor.orgId), page.after(destinations.id)];
  if (filter.type) conds.push(eq(destinations.type, filter.type));
  const rows = await deps.database.db
    .select()
    .from(destinations)
    .where(and(...conds))
    .orderBy(desc(destinations.id))
    .limit(page.limit + 1);
  return pageResult(rows, page, presentDestination);
}

export async function getDestinationRow(db: Db, orgId: string, id: string): Promise<DestinationRow> {
  const [row] = await db
    .select()
    .from(destinations)
    .where(and(eq(destinations.id, id), eq(destinations.orgId, orgId)))
    .limit(1);
  if (!row) throw notFound('destination', id);
  return row;
}

/**
 * PATCH: rename, or merge config over the stored one; a changed config resets health and verified.
 * A URL moved to another origin drops the stored secret and header values not given again (forgetOnMove).
 */
export async function updateDestination(
  deps: Deps,
  actor: Actor,
  id: string,
  body: z.output<typeof UpdateDestinationBody>,
): Promise<z.output<typeof DestinationUpdated>> {
  const db = deps.database.db;
  let current = await getDestinationRow(db, actor.orgId, id);
  if (body.enabled !== undefined && body.enabled !== current.enabled) {
    current = await switchDestination(deps, actor, id, body.enabled);
  }
  const type = current.type as DestinationType;
  const moved = body.config
    ? forgetOnMove(current.config, body.config, mergeConfig(type, current.config, body.config))
    : { config: current.config, warnings: [] };
  const config = body.config ? checkConfig(deps, type, moved.config) : current.config;
  const changed = JSON.stringify(config) !== JSON.stringify(current.config);
  const changes = {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(changed ? { config, health: 'unknown', verified: false, consecutiveFailures: 0 } : {}),
  };
  const urlMoved = body.config && config.url !== current.config.url;
  const all = [...moved.warnings, ...(urlMoved ? chatUrlWarnings(type, config) : [])];
  const warned = all.length ? { warnings: all } : {};
  if (!Object.keys(changes).length) return { ...presentDestination(current), ...warned };
  // Re-pointed (URL, chat, recipients; not the name) by a key under settings.approve_destinations "keys": it waits again.
  const ask =
    changed && repointed(type, current.config, config) && mustWait(actor, await approvalSetting(db, actor.orgId));
  const row = await db.transaction(async (tx) => {
    const [updated] = await tx
      .update(destinations)
      .set(changes)
      .where(and(eq(destinations.id, id), eq(destinations.orgId, actor.orgId)))
      .returning();
    if (!updated) throw notFound('destination', id);
    return ask ? requestApproval(tx, deps, actor, id) : updated;
  });
  if (ask) await mailApprovers(deps, row);
  return { ...presentDestination(row), ...warned };
}

/**
 * PATCH {enabled}: pausing makes its queued deliveries wait (pending, not due, not attempted);
 * enabling forgets the failure run and makes every waiting delivery due now, so nothing is lost.
 */
async function switchDestination(deps: Deps, actor: Actor, id: string, enabled: boolean) {
  const row = await deps.database.db.transaction((tx) =>
    setDestinationEnabled(tx, actor.orgId, id, enabled, deps.now()),
  );
  if (!row) throw notFound('destination', id);
  if (enabled) deps.wake();
  return row;
}

/** Deletes an unused destination; the row lock makes a concurrent route creation wait or fail. */
export async function deleteDestination(deps: Deps, actor: Actor, id: string) {
  await deps.database.db.transaction(async (tx) => {
    const [row] = await tx
      .select({ id: destinations.id })
      .from(destinations)
      .where(and(eq(destinations.id, id), eq(destinations.orgId, actor.orgId)))
      .for('update');
    if (!row) throw notFound('destination', id);
    const [{ n }] = await tx
      .select({ n: count() })
      .from(routes)
      .where(and(eq(routes.orgId, actor.orgId), eq(routes.destinationId, id)));
    if (Number(n) > 0) {
      throw new ApiError('conflict', `The destination is still used by ${n} route(s).`, {
        hint: `Delete those routes first (${routeOf(ops.routes.list)}?destination_id=${id}, then ${routeOf(ops.routes.delete)}), or point them at another destination with ${routeOf(ops.routes.update)}.`,
        details: { routes: Number(n) },
      });
    }
    await tx.delete(destinations).where(and(eq(destinations.id, id), eq(destinations.orgId, actor.orgId)));
  });
}
