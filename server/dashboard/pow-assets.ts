import type { OpenAPIHono } from '@hono/zod-openapi';
import { ApiError } from '../core/errors.js';
import type { AppEnv } from '../http/context.js';
import { powAssets } from '../present/pow-widget.js';

/**
 * GET /assets/pow/{altcha.js,altcha.css,pbkdf2.js}: the proof-of-work widget, public. Any site's
 * page may load it (a module script from another origin needs CORS), so it is served with
 * Access-Control-Allow-Origin: *; `?v=` names the version, so a day of caching is safe.
 */
export function registerPowAssets(app: OpenAPIHono<AppEnv>) {
  app.get('/assets/pow/:file', (c) => {
    const asset = powAssets().files[c.req.param('file')];
    if (!asset)
      throw new ApiError('not_found', `There is no widget file ${c.req.param('file')}.`, {
        hint: "The widget's files are altcha.js, altcha.css and pbkdf2.js.",
      });
    return c.body(asset.body, 200, {
      'Content-Type': asset.type,
      'Cache-Control': 'public, max-age=86400',
      'Access-Control-Allow-Origin': '*',
      'Cross-Origin-Resource-Policy': 'cross-origin',
      'X-Content-Type-Options': 'nosniff',
    });
  });
}
