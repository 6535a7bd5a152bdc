import type { OpenAPIHono } from '@hono/zod-openapi';
import { getCookie } from 'hono/cookie';
import { authOps } from '../../shared/contracts/auth.js';
import { clearSessionCookie, cookieOrigin, SESSION_COOKIE, setSessionCookie } from '../http/auth.js';
import { codeTries } from '../http/code-tries.js';
import { type AppEnv, noContent, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { requestCode, signIn, signOut, verifyCode } from '../services/auth.js';

export function registerAuth(app: OpenAPIHono<AppEnv>) {
  mount(app, authOps.providers, (c) =>
    send(c, {
      email_password: { sign_in: false, sign_up: false },
      email_code: { sign_in: true, sign_up: true },
      social: [],
      sign_in_url: `${c.get('deps').config.publicBaseUrl}/llms.txt#sign-in`,
    }),
  );
  mount(app, authOps.requestCode, async (c) =>
    send(c, await requestCode(c.get('deps'), c.req.valid('json').email, c.get('clientIp'))),
  );
  // Both take a try at the code (codeTries) before anything else, replays included.
  mount(
    app,
    authOps.verifyCode,
    async (c) => send(c, await verifyCode(c.get('deps'), c.req.valid('json'), c.get('codeTry')), 201),
    [codeTries],
  );
  mount(
    app,
    authOps.signIn,
    async (c) => {
      const deps = c.get('deps');
      const s = await signIn(deps, c.req.valid('json'), c.get('codeTry'));
      setSessionCookie(c, deps, s);
      return send(c, s.body);
    },
    [codeTries],
  );
  // Never replayed (x-never-replayed): a second sign-out runs again. The cookie's origin is checked.
  mount(
    app,
    authOps.signOut,
    async (c) => {
      await signOut(c.get('deps'), getCookie(c, SESSION_COOKIE));
      clearSessionCookie(c);
      return noContent(c);
    },
    [cookieOrigin],
  );
}
