import type { Context } from 'hono';
import { Hono } from 'hono';
import { operations } from '../../shared/contracts/index.js';
import type { Deps } from '../core/deps.js';
import { ApiError } from '../core/errors.js';
import { safeEqual } from '../domain/secrets.js';
import type { AppEnv } from '../http/context.js';
import { envelope } from '../http/errors.js';
import { Readiness } from './readiness.js';

/** `GET /v1/forms/{id}` → its operationId, keyed by method and Hono's route pattern (`/v1/forms/:id`). */
const OPERATION_IDS = new Map(
  operations.map((o) => [`${o.method.toUpperCase()} ${o.path.replace(/\{([^}]+)\}/g, ':$1')}`, o.operationId]),
);

/**
 * The `operation` label of a request: the contract's operationId, else the route pattern that
 * answered (dashboard pages, /files/:id), else `unmatched`: never a path with an id in it.
 */
export function operationOf(c: Context<AppEnv>): string {
  const pattern = c.req.routePath;
  if (!pattern || pattern === '*' || pattern === '/*') return 'unmatched';
  return OPERATION_IDS.get(`${c.req.method} ${pattern}`) ?? `${c.req.method} ${pattern}`;
}

function fail(c: Context, deps: Deps, err: ApiError) {
  for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
  return c.json(envelope(err, deps.config.publicBaseUrl), err.status as 401);
}

/** GET /readyz's answer (also served by a worker-role process and the metrics port). */
export async function readyAnswer(c: Context, deps: Deps) {
  const readiness = deps.readiness ?? new Readiness(deps.database);
  const reason = await readiness.problem();
  if (reason === null) return c.json({ ok: true as const }, 200);
  c.header('Retry-After', '2');
  return c.json({ ok: false as const, reason }, 503);
}

/**
 * GET /metrics on the API port when METRICS=true and no METRICS_PORT is set: the bearer token
 * METRICS_TOKEN is required (compared in constant time). Otherwise the path is unknown here.
 */
export function registerMetrics(app: Hono<AppEnv>, deps: Deps) {
  const { config } = deps;
  if (!config.metrics || config.metricsPort !== undefined || !deps.metrics) return;
  const metrics = deps.metrics;
  app.get('/metrics', async (c) => {
    const given = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    if (!config.metricsToken || !safeEqual(given, config.metricsToken)) {
      return fail(
        c,
        deps,
        new ApiError('unauthorized', 'GET /metrics needs the metrics token.', {
          hint: 'Send Authorization: Bearer <METRICS_TOKEN>, or serve metrics on a port of their own with METRICS_PORT.',
          headers: { 'WWW-Authenticate': 'Bearer' },
        }),
      );
    }
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { 'content-type': contentType });
  });
}

/** The metrics port's app (METRICS_PORT): /metrics without a token, and the two probes. */
export function buildMetricsApp(deps: Deps) {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    const { contentType, body } = (await deps.metrics?.render()) ?? { contentType: 'text/plain', body: '' };
    return c.body(body, 200, { 'content-type': contentType });
  });
  app.get('/healthz', (c) => c.json({ ok: true as const }, 200));
  app.get('/readyz', (c) => readyAnswer(c, deps));
  app.notFound((c) =>
    fail(
      c,
      deps,
      new ApiError('not_found', `No route ${c.req.method} ${c.req.path} on the metrics port.`, {
        hint: 'This port serves GET /metrics, /healthz and /readyz only.',
      }),
    ),
  );
  return app;
}

/** A ROLE=worker process's HTTP surface: /healthz, /readyz and (METRICS=true) /metrics; nothing else. */
export function buildWorkerApp(deps: Deps) {
  const app = new Hono<AppEnv>();
  app.get('/healthz', (c) => c.json({ ok: true as const }, 200));
  app.get('/readyz', (c) => readyAnswer(c, deps));
  registerMetrics(app, deps);
  app.notFound((c) =>
    fail(
      c,
      deps,
      new ApiError('not_found', `No route ${c.req.method} ${c.req.path}: this process runs ROLE=worker.`, {
        hint: 'Send API and form traffic to a process with ROLE=all or ROLE=api; a worker serves /healthz, /readyz and /metrics.',
      }),
    ),
  );
  app.onError((err, c) => {
    deps.log.error({ err: String(err) }, 'unexpected failure');
    return fail(c, deps, new ApiError('internal_error', 'Something went wrong on our side.'));
  });
  return app;
}
