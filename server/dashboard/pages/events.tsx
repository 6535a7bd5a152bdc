import type { Context, Hono } from 'hono';
import { eventOps } from '../../../shared/contracts/events.js';
import { webhookOps } from '../../../shared/contracts/webhooks.js';
import { ApiError } from '../../core/errors.js';
import { pageOf } from '../../core/pagination.js';
import { presentWebhook } from '../../present/webhooks.js';
import { listEvents } from '../../services/events.js';
import { retryWebhookDeliveries } from '../../services/replay.js';
import { newWebhookSecret } from '../../services/webhook-secret.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhookRow,
  listWebhookDeliveries,
  listWebhooks,
  updateWebhook,
} from '../../services/webhooks.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, issuesOf, queryFor } from '../input.js';
import { done, page } from '../render.js';
import { EventLog } from './events/log.js';
import { WebhookDetail } from './events/webhook-detail.js';
import { NO_VALUES, WebhookAdded, WebhookList, type WebhookValues } from './events/webhooks.js';
import { all, can, fieldsOf, one } from './org-common.js';

async function webhooksPage(
  c: Context<DashEnv>,
  form: { values: WebhookValues; error?: ApiError } = { values: NO_VALUES },
) {
  allow(c, webhookOps.list);
  const q = queryFor(webhookOps.list, c.req.query());
  const list = await listWebhooks(c.var.deps, c.var.actor, pageOf(q, 'webhook'));
  const issues = issuesOf(form.error);
  return page(
    c,
    { title: 'System webhooks', section: 'events', status: form.error ? 422 : 200 },
    <WebhookList c={c} list={list} form={form} issues={issues} create={can(c, webhookOps.create)} />,
  );
}

/** The event log, filtered by type. */
async function eventsPage(c: Context<DashEnv>) {
  allow(c, eventOps.list);
  const raw = c.req.query();
  // Empty fields of the filter form mean "any"; the rest goes through the API's query schema.
  const kept = Object.fromEntries(
    (['type', 'cursor', 'limit'] as const).flatMap((k) => (raw[k] ? [[k, raw[k]]] : [])),
  ) as Record<string, string>;
  const q = queryFor(eventOps.list, kept);
  const list = await listEvents(c.var.deps, c.var.actor, pageOf(q, 'event'), q);
  const more = (cursor: string) => `/app/events?${new URLSearchParams({ ...kept, cursor }).toString()}`;
  return page(c, { title: 'Events', section: 'events' }, <EventLog list={list} q={q} more={more} />);
}

/** Adds a system webhook; its secret (given or generated) is shown on this answer only. */
async function addWebhook(c: Context<DashEnv>) {
  allow(c, webhookOps.create);
  const f = await fieldsOf(c);
  const values: WebhookValues = {
    url: one(f, 'url').trim(),
    events: all(f, 'events'),
    secret: one(f, 'secret'),
    generate: one(f, 'generate') === '1',
  };
  const secret = values.secret ? values.secret : values.generate ? newWebhookSecret() : undefined;
  let created: Awaited<ReturnType<typeof createWebhook>>;
  try {
    const body = bodyFor(webhookOps.create, {
      url: values.url,
      events: values.events,
      ...(secret ? { secret } : {}),
    });
    created = await createWebhook(c.var.deps, c.var.actor, body);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'validation_failed') {
      return webhooksPage(c, { values: { ...values, secret: '' }, error: err });
    }
    throw err;
  }
  // The secret is on this answer only: the webhook's pages and the API show has_secret, never the value.
  return page(c, { title: 'Webhook added', section: 'events' }, <WebhookAdded created={created} secret={secret} />);
}

/** A system webhook with its deliveries, filtered by status. */
async function webhookPage(c: Context<DashEnv, '/webhooks/:id'>) {
  allow(c, webhookOps.get);
  const id = c.req.param('id');
  const w = presentWebhook(await getWebhookRow(c.var.deps.database.db, c.var.actor.orgId, id));
  allow(c, webhookOps.deliveries);
  const raw = c.req.query();
  const q = queryFor(webhookOps.deliveries, {
    ...(raw.status ? { status: raw.status } : {}),
    ...(raw.cursor ? { cursor: raw.cursor } : {}),
  });
  const list = await listWebhookDeliveries(c.var.deps, c.var.actor, id, pageOf(q, 'webhookDelivery'), q);
  const base = `/app/webhooks/${encodeURIComponent(w.id)}`;
  const manage = can(c, webhookOps.update);
  return page(
    c,
    { title: `Webhook ${w.url}`, section: 'events' },
    <WebhookDetail c={c} w={w} list={list} q={q} base={base} manage={manage} />,
  );
}

export function registerEventPages(dash: Hono<DashEnv>): void {
  dash.get('/events', eventsPage);
  dash.get('/webhooks', (c) => webhooksPage(c));
  dash.post('/webhooks', addWebhook);
  dash.get('/webhooks/:id', webhookPage);

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    dash.post(`/webhooks/:id/${action}`, async (c) => {
      allow(c, webhookOps.update);
      const id = c.req.param('id');
      await updateWebhook(c.var.deps, c.var.actor, id, bodyFor(webhookOps.update, { enabled }));
      return done(c, `/app/webhooks/${encodeURIComponent(id)}`, enabled ? 'Webhook enabled.' : 'Webhook disabled.');
    });
  }

  dash.post('/webhooks/:id/retry', async (c) => {
    allow(c, webhookOps.retryDeliveries);
    const id = c.req.param('id');
    const r = await retryWebhookDeliveries(c.var.deps, c.var.actor, id, bodyFor(webhookOps.retryDeliveries, {}));
    return done(
      c,
      `/app/webhooks/${encodeURIComponent(id)}`,
      r.matched ? `${r.queued} dead deliveries queued again.` : 'No dead delivery to retry.',
    );
  });

  dash.post('/webhooks/:id/delete', async (c) => {
    allow(c, webhookOps.delete);
    await deleteWebhook(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/webhooks', 'Webhook deleted.');
  });
}
