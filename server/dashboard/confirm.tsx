import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import { confirmByLink, confirmLinkState, type LinkState } from '../services/confirm.js';
import { message } from './hosted.js';

/**
 * The double opt-in link, /c/{token}, public. GET shows the form's name and one button and changes
 * nothing (mail scanners and link previews follow links); the button POSTs back to the same
 * address, which confirms. The token is the secret; the POST must still come from this page
 * (Sec-Fetch-Site, else Origin), so another site cannot press it for a visitor holding the link.
 */
function over(c: Context<AppEnv>, base: string, s: Exclude<LinkState, { state: 'pending' }>) {
  if (s.state === 'invalid') {
    return message(
      c,
      base,
      404,
      'This link is not valid',
      <p>The confirmation link is incomplete or was changed. Please open the link from the mail exactly as it came.</p>,
    );
  }
  if (s.state === 'used') {
    return message(
      c,
      base,
      410,
      'Already confirmed',
      <p>This link was used already: your submission to “{s.formName}” is confirmed. There is nothing more to do.</p>,
    );
  }
  return message(
    c,
    base,
    410,
    'This link has expired',
    <p>The confirmation link is no longer valid. Please send the form again to get a new one.</p>,
  );
}

/** Whether a POST comes from the page itself: same origin by Sec-Fetch-Site, else by Origin (when sent). */
function fromOwnPage(c: Context<AppEnv>, base: string): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site) return site === 'same-origin' || site === 'none';
  const origin = c.req.header('origin');
  return !origin || origin === new URL(base).origin;
}

export function registerConfirmPages(app: OpenAPIHono<AppEnv>) {
  app.get('/c/:token', async (c) => {
    const base = c.get('deps').config.publicBaseUrl;
    const s = await confirmLinkState(c.get('deps'), c.req.param('token'));
    if (s.state !== 'pending') return over(c, base, s);
    return message(
      c,
      base,
      200,
      'Confirm your submission',
      <>
        <p>Please confirm that you sent the form “{s.formName}”. Nothing is passed on until you do.</p>
        <form action={`/c/${encodeURIComponent(c.req.param('token'))}`} method="post">
          <p>
            <button type="submit">Confirm</button>
          </p>
        </form>
      </>,
    );
  });
  app.post('/c/:token', async (c) => {
    const deps = c.get('deps');
    const base = deps.config.publicBaseUrl;
    if (!fromOwnPage(c, base)) {
      return message(
        c,
        base,
        403,
        'Please use the button',
        <p>Open the link from the mail and press the button on its page to confirm.</p>,
      );
    }
    const who = { ip: c.get('clientIp'), userAgent: c.req.header('user-agent') ?? null };
    const s = await confirmByLink(deps, c.req.param('token'), who);
    if (s.state !== 'pending') return over(c, base, s);
    return message(c, base, 200, 'Thank you, confirmed', <p>Your submission to “{s.formName}” is confirmed.</p>);
  });
}
