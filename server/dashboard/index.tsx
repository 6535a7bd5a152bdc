import type { OpenAPIHono } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { ApiError } from '../core/errors.js';
import type { AppEnv } from '../http/context.js';
import { APP_CSS, APP_JS } from './assets.js';
import type { DashEnv } from './env.js';
import { registerApprovalPages } from './pages/approvals.js';
import { registerAuthPages } from './pages/auth.js';
import { registerDeliveryPages } from './pages/deliveries.js';
import { CSS as DESTINATIONS_CSS } from './pages/destinations.assets.js';
import { registerDestinationPages } from './pages/destinations.js';
import { registerEventPages } from './pages/events.js';
import { CSS as FORMS_CSS } from './pages/forms.assets.js';
import { registerFormPages } from './pages/forms.js';
import { registerInboxPages } from './pages/inbox.js';
import { CSS as JOURNEY_CSS } from './pages/journey.assets.js';
import { registerOAuthPages } from './pages/oauth.js';
import { CSS as SPAM_CSS } from './pages/spam.assets.js';
import { registerSpamPages } from './pages/spam.js';
import { registerStreamPages } from './pages/streams.js';
import { registerSubmissionPages } from './pages/submission.js';
import { CSS as TEAM_CSS } from './pages/team.assets.js';
import { registerTeamPages } from './pages/team.js';
import { ErrorBox, page } from './render.js';
import { csrfGuard, securityHeaders } from './security.js';
import { sessionGate } from './session.js';

/**
 * The dashboard at /app: server-rendered pages (Hono JSX) that call the same services, with the
 * same scope and tenant checks, as /v1. Not part of /openapi.json. Every page behind sign-in uses
 * the API's session cookie; every state-changing request carries a CSRF token.
 */
export function registerDashboard(app: OpenAPIHono<AppEnv>) {
  const dash = new Hono<DashEnv>();
  dash.use('*', securityHeaders);
  // The pages' own additions follow the base stylesheet; one file, one request.
  const css = [APP_CSS, FORMS_CSS, DESTINATIONS_CSS, TEAM_CSS, JOURNEY_CSS, SPAM_CSS].join('\n');
  const js = [APP_JS].join('\n');
  dash.get('/assets/app.css', (c) =>
    c.body(css, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=300' }),
  );
  dash.get('/assets/app.js', (c) =>
    c.body(js, 200, {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
    }),
  );
  dash.use('*', sessionGate);
  dash.use(
    '*',
    csrfGuard((c) =>
      page(
        c,
        { title: 'Request refused', status: 403 },
        <ErrorBox
          message="This form was not sent from this dashboard page, or the page is too old."
          hint="Reload the page and try again."
        />,
      ),
    ),
  );

  registerAuthPages(dash);
  registerInboxPages(dash);
  registerSubmissionPages(dash);
  registerFormPages(dash);
  registerDestinationPages(dash);
  registerDeliveryPages(dash);
  registerStreamPages(dash);
  registerEventPages(dash);
  registerSpamPages(dash);
  registerTeamPages(dash);
  registerOAuthPages(dash);
  registerApprovalPages(dash);

  dash.all('*', (c) =>
    page(
      c,
      { title: 'Not found', status: 404 },
      <ErrorBox message={`There is no page at ${c.req.path}.`} hint="Use the navigation above." />,
    ),
  );
  dash.onError((err, c) => {
    if (!(err instanceof ApiError)) throw err;
    const status = ([400, 403, 404, 409, 422, 429] as const).find((s) => s === err.status) ?? 400;
    return page(c, { title: 'Something needs attention', status }, <ErrorBox message={err.message} hint={err.hint} />);
  });

  app.route('/app', dash);
}
