import { and, eq } from 'drizzle-orm';
import type { z } from '../../shared/contracts/common.js';
import type { CreateDestinationBody } from '../../shared/contracts/destinations.js';
import { ops } from '../../shared/contracts/index.js';
import type { QuickstartBody, QuickstartResult } from '../../shared/contracts/quickstart.js';
import type { Actor, Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import type { DestinationRow } from '../db/rows.js';
import { destinations, organizations, routes, users } from '../db/schema.js';
import { canonicalOrigin } from '../domain/checks.js';
import { presentDestination } from '../present/destinations.js';
import { buildVerify } from '../present/embed.js';
import { presentRoute } from '../present/routes.js';
import { createDestination } from './destinations.js';
import { createForm, updateForm } from './forms.js';
import { nextStep } from './next-steps.js';
import { createRoute } from './routes.js';
import { newWebhookSecret, VERIFY_WEBHOOK } from './webhook-secret.js';

export type QuickstartInput = z.output<typeof QuickstartBody>;

type Wanted = {
  type: 'email' | 'telegram' | 'webhook' | 'slack' | 'discord';
  name: string;
  config: Record<string, unknown>;
};

/** Whether a stored destination is the one the quickstart would create (so a repeat reuses it). */
function matches(d: DestinationRow, w: Wanted): boolean {
  if (d.type !== w.type) return false;
  const c = d.config;
  if (w.type === 'email') return Array.isArray(c.to) && c.to.length === 1 && c.to[0] === (w.config.to as string[])[0];
  if (w.type === 'telegram') return c.chat_id === w.config.chat_id && c.bot_token === w.config.bot_token;
  if (c.url !== w.config.url) return false;
  if (w.type === 'slack' || w.type === 'discord') return (c.template ?? null) === (w.config.template ?? null);
  // A repeat without a secret reuses the hook whatever secret it has (a generated one included).
  return w.config.secret === undefined || (c.secret ?? null) === w.config.secret;
}

/** Where notifications go when the caller names no address: the session's user, else the owner. */
async function ownerEmail(deps: Deps, actor: Actor): Promise<string | null> {
  const db = deps.database.db;
  let userId = actor.userId ?? null;
  if (!userId) {
    const [org] = await db
      .select({ owner: organizations.ownerUserId })
      .from(organizations)
      .where(eq(organizations.id, actor.orgId));
    userId = org?.owner ?? null;
  }
  if (!userId) return null;
  const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  return user?.email ?? null;
}

/**
 * The one-call routed form. Each step reuses what exists (the form by project and slug, a matching
 * destination routed directly from the form), so repeating the call converges on the same result
 * and only adds what is missing; the steps run one after another through the ordinary services.
 */
export async function quickstart(
  deps: Deps,
  actor: Actor,
  body: QuickstartInput,
): Promise<{ created: boolean; result: z.output<typeof QuickstartResult> }> {
  const email = body.notify_email?.toLowerCase() ?? (await ownerEmail(deps, actor));
  if (!email) {
    throw new ApiError('validation_failed', 'No address to notify: this organization has no owner with an email.', {
      hint: 'Pass notify_email with the address that should receive the submissions.',
      details: { issues: [{ path: 'notify_email', message: 'required for this organization' }] },
    });
  }
  const made = await createForm(deps, actor, { name: body.name, project: body.project, if_exists: 'return' });
  let created = made.created;
  const formId = made.form.id;
  let form = made.form;
  const origin = canonicalOrigin(body.origin);
  if (origin) {
    const allowed = Array.isArray(form.settings.allowed_origins) ? (form.settings.allowed_origins as string[]) : [];
    if (!allowed.includes(origin)) {
      form = {
        ...form,
        ...(await updateForm(deps, actor, formId, { settings: { allowed_origins: [...allowed, origin] } })),
      };
    }
  }
  const wanted: Wanted[] = [{ type: 'email', name: `${body.name} (email)`, config: { to: [email] } }];
  if (body.telegram) {
    wanted.push({
      type: 'telegram',
      name: `${body.name} (telegram)`,
      config: { bot_token: body.telegram.bot_token, chat_id: String(body.telegram.chat_id) },
    });
  }
  if (body.webhook) {
    wanted.push({
      type: 'webhook',
      name: `${body.name} (webhook)`,
      config: { url: body.webhook.url, ...(body.webhook.secret ? { secret: body.webhook.secret } : {}) },
    });
  }
  for (const type of ['slack', 'discord'] as const) {
    const hook = body[type];
    if (hook) wanted.push({ type, name: `${body.name} (${type})`, config: { ...hook } });
  }
  let generatedSecret: string | null = null;
  const db = deps.database.db;
  const outDestinations = [];
  const outRoutes = [];
  const warnings: string[] = [];
  for (const w of wanted) {
    const existing = await db
      .select({ route: routes, dest: destinations })
      .from(routes)
      .innerJoin(destinations, eq(destinations.id, routes.destinationId))
      .where(and(eq(routes.orgId, actor.orgId), eq(routes.formId, formId)));
    const hit = existing.find((x) => matches(x.dest, w));
    if (hit) {
      outDestinations.push(presentDestination(hit.dest));
      outRoutes.push(presentRoute(hit.route));
      continue;
    }
    let config = w.config;
    if (w.type === 'webhook' && config.secret === undefined) {
      // Every quickstart webhook is signed: without a secret one is generated and shown once.
      generatedSecret = newWebhookSecret();
      config = { ...config, secret: generatedSecret };
    }
    // `wanted` is built from the quickstart body's own checked parts; createDestination checks the config for its type again.
    const create = { ...w, config } as z.output<typeof CreateDestinationBody>;
    const { warnings: doubts, ...dest } = await createDestination(deps, actor, create);
    warnings.push(...(doubts ?? []));
    const route = await createRoute(deps, actor, { form_id: formId, destination_id: dest.id });
    outDestinations.push(dest);
    outRoutes.push(route);
    created = true;
  }
  const { embed, verify: _verify, next: _formNext, ...formOnly } = form;
  const approval = approvalOf(deps, outDestinations);
  return {
    created,
    result: {
      form: formOnly,
      embed,
      // Built from the settings as they are now: an origin added above must travel with the test post.
      verify: buildVerify(formOnly.submit_url, formOnly.settings.allowed_origins),
      next: [
        ...(approval
          ? [
              nextStep(ops.destinations.get, `${approval.message} Poll this until approval is "approved".`, {
                params: { id: approval.destinations[0] },
              }),
            ]
          : []),
        nextStep(ops.intake.submit, 'Prove delivery: send a test submission; the answer lists delivery ids', {
          params: { formId },
          body: { email: 'test@example.com', message: 'Hello from the quickstart', _test: true },
        }),
        nextStep(ops.deliveries.get, 'Poll a delivery until it is sent (or read last_error if it failed)'),
        nextStep(ops.destinations.create, 'Send to a webhook too (signed when you give a secret)', {
          body: {
            type: 'webhook',
            name: 'My endpoint',
            config: { url: 'https://example.com/hook', secret: 'whsec_…' },
          },
        }),
        nextStep(ops.forms.update, 'Only accept posts from your site', {
          params: { id: formId },
          body: { settings: { allowed_origins: ['https://example.com'] } },
        }),
      ],
      destinations: outDestinations,
      routes: outRoutes,
      ...(generatedSecret ? { webhook_signing: { secret: generatedSecret, verify: VERIFY_WEBHOOK } } : {}),
      ...(warnings.length ? { warnings } : {}),
      ...(approval ? { approval } : {}),
    },
  };
}

/** What the quickstart says when its destinations wait for a person (settings.approve_destinations "keys"). */
function approvalOf(deps: Deps, made: Array<{ id: string; name: string; approval: string }>) {
  const waiting = made.filter((d) => d.approval === 'pending');
  if (!waiting.length) return null;
  const url = `${deps.config.publicBaseUrl}/app/approvals`;
  return {
    destinations: waiting.map((d) => d.id),
    approve_url: url,
    message:
      `A person must approve ${waiting.map((d) => `"${d.name}"`).join(', ')} before the test delivery can be sent: ` +
      `an owner or admin of the organization opens ${url} in the dashboard (they were mailed the link). ` +
      'Until then the deliveries wait, unattempted.',
  };
}
