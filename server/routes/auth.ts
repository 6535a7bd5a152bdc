import type { OpenAPIHono } from '@hono/zod-openapi';
import { getCookie } from 'hono/cookie';
import { authOps } from '../../shared/contracts/auth.js';
import { clearSessionCookie, SESSION_COOKIE, setSessionCookie } from '../http/auth.js';
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
  mount(app, authOps.verifyCode, async (c) => send(c, await verifyCode(c.get('deps'), c.req.valid('json')), 201));
  mount(app, authOps.signIn, async (c) => {
    const deps = c.get('deps');
    const s = await signIn(deps, c.req.valid('json'));
    setSessionCookie(c, deps, s);
    return send(c, s.body);
  });
  mount(app, authOps.signOut, async (c) => {
    await signOut(c.get('deps'), getCookie(c, SESSION_COOKIE));
    clearSessionCookie(c);
    return noContent(c);
  });
}
