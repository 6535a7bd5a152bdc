import type { Context, Hono } from 'hono';
import { deliveryOps } from '../../../shared/contracts/deliveries.js';
import { pageOf } from '../../core/pagination.js';
import { listDeliveries, retryDelivery } from '../../services/deliveries.js';
import { retryDeliveries } from '../../services/replay.js';
import { formIdOf } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { done, ErrorBox, page } from '../render.js';
import { type Filters, filtersOf, replayOf } from './deliveries/filters.js';
import { DeliveryLog } from './deliveries/log.js';
import { RetryConfirm } from './deliveries/retry.js';
import { choices, formValues, namesOf, qs } from './routing-ui.js';

/** A local return address for after a retry: the log with its filters, never another site. */
const backTo = (s: string | undefined) =>
  s && /^\/app\/deliveries(\?[^\s]*)?$/.test(s) && !s.startsWith('//') ? s : '/app/deliveries';

async function describeFilters(c: Context<DashEnv>, f: Filters) {
  const [d, fm] = await Promise.all([namesOf(c, 'destinations', [f.destination_id]), namesOf(c, 'forms', [f.form_id])]);
  return [
    `status ${f.status ?? 'dead or failed'}`,
    f.destination_id ? `destination “${d.get(f.destination_id) ?? f.destination_id}”` : '',
    f.form_id ? `form “${fm.get(f.form_id) ?? f.form_id}”` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** The delivery log, filtered by status, destination and form. */
async function logPage(c: Context<DashEnv>) {
  allow(c, deliveryOps.list);
  const f = filtersOf(c.req.query());
  const cursor = c.req.query('cursor') || undefined;
  const limit = c.req.query('limit') || undefined;
  const q = queryFor(deliveryOps.list, { ...f, cursor, limit });
  const list = await listDeliveries(c.var.deps, c.var.actor, pageOf(q, 'delivery'), q);
  const [destList, formList] = await Promise.all([choices(c, 'destinations'), choices(c, 'forms')]);
  // The rows' names come from the filter choices; only ids beyond them are looked up (one query each).
  const destNames = await withNames(
    c,
    'destinations',
    destList,
    list.data.map((d) => d.destination_id),
  );
  const formNames = await withNames(
    c,
    'forms',
    formList,
    list.data.map((d) => formIdOf(d.payload?.form)),
  );
  const here = `/app/deliveries${qs({ ...f, limit, cursor })}`;
  const replay = replayOf(f);
  return page(
    c,
    { title: 'Deliveries', section: 'deliveries' },
    <DeliveryLog
      c={c}
      f={f}
      list={list}
      choices={{ destinations: destList, forms: formList }}
      names={{ destinations: destNames, forms: formNames }}
      page={{ here, cursor, limit }}
      replay={replay}
    />,
  );
}

/** The confirmation of a bulk retry (works without JavaScript): what will be retried, and a button. */
async function retryConfirmPage(c: Context<DashEnv>) {
  allow(c, deliveryOps.retryAll);
  const f = filtersOf(c.req.query());
  const replay = replayOf(f);
  const described = 'body' in replay ? await describeFilters(c, f) : '';
  return page(
    c,
    { title: 'Retry all that match', section: 'deliveries', status: 'body' in replay ? 200 : 422 },
    <RetryConfirm c={c} f={f} replay={replay} described={described} />,
  );
}

export function registerDeliveryPages(dash: Hono<DashEnv>): void {
  dash.get('/deliveries', logPage);

  dash.post('/deliveries/:id/retry', async (c) => {
    allow(c, deliveryOps.retry);
    const v = await formValues(c);
    const d = await retryDelivery(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, backTo(v.back), `Delivery ${d.id} is queued again.`);
  });

  dash.get('/deliveries/retry', retryConfirmPage);

  dash.post('/deliveries/retry', async (c) => {
    allow(c, deliveryOps.retryAll);
    const f = filtersOf(await formValues(c));
    const replay = replayOf(f);
    if (!('body' in replay)) {
      return page(
        c,
        { title: 'Retry all that match', section: 'deliveries', status: 422 },
        <ErrorBox message={replay.why} hint="Go back to the delivery log and choose filters." />,
      );
    }
    const result = await retryDeliveries(c.var.deps, c.var.actor, bodyFor(deliveryOps.retryAll, replay.body));
    return done(
      c,
      `/app/deliveries${qs(f)}`,
      `Queued ${result.queued} of ${result.matched} matching deliveries again.`,
    );
  });
}

/** id → name for `ids`: from the rows already loaded, plus one look-up of any missing. */
async function withNames(
  c: Context<DashEnv>,
  kind: 'destinations' | 'forms',
  known: Array<{ id: string; name: string }>,
  ids: Array<string | undefined>,
) {
  const names = new Map(known.map((k) => [k.id, k.name]));
  const missing = ids.filter((id): id is string => !!id && !names.has(id));
  if (missing.length) for (const [id, name] of await namesOf(c, kind, missing)) names.set(id, name);
  return names;
}
