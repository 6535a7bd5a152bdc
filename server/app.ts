import crypto from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { operations } from '../shared/contracts/index.js';
import type { ErrorCode } from '../shared/errors.js';
import type { Deps } from './core/deps.js';
import { ApiError } from './core/errors.js';
import { registerConfirmPages } from './dashboard/confirm.js';
import { registerHostedPages } from './dashboard/hosted.js';
import { registerDashboard } from './dashboard/index.js';
import { registerPowAssets } from './dashboard/pow-assets.js';
import { isDbUnavailable, isUnstorableValue } from './db/errors.js';
import { operationOf, registerMetrics } from './fleet/http.js';
import type { AppEnv } from './http/context.js';
import { clientGone, envelope, zodIssues } from './http/errors.js';
import { clientIp, trustList } from './http/ip.js';
import { KeptRouter } from './http/router.js';
import { registerAdmin } from './routes/admin.js';
import { registerAuth } from './routes/auth.js';
import { registerBilling } from './routes/billing.js';
import { registerDeliveries } from './routes/deliveries.js';
import { registerDrift } from './routes/drift.js';
import { registerEvents } from './routes/events.js';
import { registerForms } from './routes/forms.js';
import { registerIntake } from './routes/intake.js';
import { registerKeys } from './routes/keys.js';
import { registerMcp } from './routes/mcp.js';
import { registerMe } from './routes/me.js';
import { bearerChallenge, registerOAuth } from './routes/oauth.js';
import { registerOrganizations } from './routes/organizations.js';
import { registerProjects } from './routes/projects.js';
import { registerQuickstart } from './routes/quickstart.js';
import { registerRouting } from './routes/routing.js';
import { registerSandboxes } from './routes/sandboxes.js';
import { registerSchemas } from './routes/schemas.js';
import { registerSpam } from './routes/spam.js';
import { registerStreams } from './routes/streams.js';
import { registerSubmissions } from './routes/submissions.js';
import { registerSystem } from './routes/system.js';
import { registerWebhooks } from './routes/webhooks.js';

const API_BODY_LIMIT = 1024 * 1024;

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/** Path patterns of the registry, for 405 answers on known paths. */
const PATTERNS = operations.map((o) => ({
  method: o.method.toUpperCase(),
  re: new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
}));

/** The whole HTTP surface. Deps are injected so tests run it in process with app.request(). */
export function buildApp(deps: Deps) {
  const trusted = trustList(deps.config.trustedProxies);
  const app = new OpenAPIHono<AppEnv>({
    router: new KeptRouter(),
    defaultHook: (result) => {
      if (!result.success) {
        throw new ApiError('validation_failed', `The ${result.target} has invalid fields.`, {
          details: { issues: zodIssues(result.error.issues) },
        });
      }
    },
  });

  app.use('*', async (c, next) => {
    const requestId = c.req.header('x-request-id')?.slice(0, 64) || crypto.randomUUID();
    c.set('requestId', requestId);
    c.set('deps', deps);
    c.set('clientIp', clientIp(c, deps.config, trusted));
    c.header('X-Request-Id', requestId);
    const started = performance.now();
    await next();
    const elapsed = performance.now() - started;
    const ms = Math.round(elapsed);
    deps.metrics?.request(operationOf(c), c.res.status, elapsed / 1000);
    const line = { req_id: requestId, method: c.req.method, path: c.req.path, ms };
    // A client that went away before its answer is nobody's failure: debug, and no status it never saw.
    // Such a request ends in an error answer; asking only then spares every other request the
    // AbortSignal the question creates.
    if (c.res.status >= 400 && clientGone(c)) deps.log.debug(line, 'request closed by the client');
    else if (c.req.path !== '/healthz' && c.req.path !== '/readyz' && c.req.path !== '/metrics')
      deps.log.info({ ...line, status: c.res.status }, 'request');
  });

  // A 401 of /mcp or /v1 tells an OAuth client where to start (RFC 9728 §5.1); the body is unchanged.
  // Mounted on those paths only: intake and the pages pay nothing for it.
  const challenge: MiddlewareHandler = async (c, next) => {
    await next();
    if (c.res.status === 401 && !c.res.headers.has('WWW-Authenticate')) {
      const hadToken = /^Bearer\s/i.test(c.req.header('authorization') ?? '');
      c.res.headers.set('WWW-Authenticate', bearerChallenge(deps.config.publicBaseUrl, c.req.path, hadToken));
    }
  };
  app.use('/mcp', challenge);
  app.use('/v1/*', challenge);

  // API answers hold an organization's data and one-time secrets: no shared or browser cache
  // keeps them (errors included). A route that set its own Cache-Control keeps it.
  app.use('/v1/*', async (c, next) => {
    await next();
    if (!c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store');
  });

  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: API_BODY_LIMIT,
      onError: () => {
        throw new ApiError('payload_too_large', 'The request body is larger than 1 MB.', {
          headers: { Connection: 'close' },
        });
      },
    }),
  );

  registerMetrics(app, deps);
  registerOAuth(app);
  mountOperations(app);
  registerDashboard(app);
  registerHostedPages(app);
  registerPowAssets(app);
  registerConfirmPages(app);

  app.notFound((c) => {
    const allowed = PATTERNS.filter((p) => p.re.test(c.req.path)).map((p) => p.method);
    if (allowed.length) {
      return reply(
        c,
        new ApiError('method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}.`, {
          hint: `Use ${allowed.join(' or ')}; /openapi.json lists every operation.`,
          headers: { Allow: allowed.join(', ') },
        }),
      );
    }
    return reply(
      c,
      new ApiError('not_found', `No route ${c.req.method} ${c.req.path}.`, {
        hint: 'See /openapi.json for every path, or /llms.txt to get started.',
      }),
    );
  });

  app.onError((err, c) => {
    if (clientGone(c)) return reply(c, new ApiError('bad_request', 'The client closed the connection.'));
    if (err instanceof ApiError) return reply(c, err);
    if (err instanceof HTTPException) {
      const code = STATUS_CODES[err.status] ?? 'bad_request';
      const message =
        err.status === 400 && /json/i.test(err.message) ? 'The body is not valid JSON.' : err.message || code;
      return reply(c, new ApiError(code, message, { status: err.status }));
    }
    if (isUnstorableValue(err)) {
      return reply(
        c,
        new ApiError('validation_failed', 'A value in the request cannot be stored.', {
          hint: 'Remove NUL characters (\\u0000, %00) and unpaired surrogates from what is sent.',
        }),
      );
    }
    if (isDbUnavailable(err)) {
      deps.log.warn({ req_id: c.get('requestId'), err: String(err) }, 'database unavailable');
      return reply(
        c,
        new ApiError('service_unavailable', 'The database is not reachable right now.', {
          headers: { 'Retry-After': '2' },
        }),
      );
    }
    deps.log.error({ req_id: c.get('requestId'), err }, 'unexpected failure');
    return reply(c, new ApiError('internal_error', 'Something went wrong on our side.'));
  });

  return app;
}

function reply(c: Context<AppEnv>, err: ApiError) {
  for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
  return c.json(envelope(err, c.get('deps')?.config.publicBaseUrl ?? ''), err.status as 400);
}

/**
 * Every operation of the registry on `app`: what /openapi.json describes. Needs no deps, so
 * scripts/openapi.ts builds the document without a database.
 */
export function mountOperations(app: OpenAPIHono<AppEnv>) {
  registerSystem(app);
  registerAuth(app);
  registerKeys(app);
  registerMe(app);
  registerProjects(app);
  registerQuickstart(app);
  registerForms(app);
  registerRouting(app);
  registerIntake(app);
  registerSubmissions(app);
  registerDeliveries(app);
  registerEvents(app);
  registerWebhooks(app);
  registerSchemas(app);
  registerDrift(app);
  registerSpam(app);
  registerStreams(app);
  registerOrganizations(app);
  registerAdmin(app);
  registerBilling(app);
  registerSandboxes(app);
  registerMcp(app);
}
