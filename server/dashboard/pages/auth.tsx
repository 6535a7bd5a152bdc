import type { Context, Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { authOps } from '../../../shared/contracts/auth.js';
import { organizationOps } from '../../../shared/contracts/organizations.js';
import { ApiError } from '../../core/errors.js';
import { clearSessionCookie, SESSION_COOKIE, setSessionCookie } from '../../http/auth.js';
import { requestCode, signIn, signOut } from '../../services/auth.js';
import { takeCodeTry } from '../../services/code-tries.js';
import { switchOrganization } from '../../services/organizations.js';
import { FieldMessage } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, issuesOf } from '../input.js';
import { CsrfField, done, ErrorBox, page } from '../render.js';

/**
 * Where to go after signing in: a path of this dashboard ("/app", "/app/…", with its query), or
 * "/app". Anything else (another site, "//host", a backslash, control characters, a path that
 * leaves /app once resolved) is refused, so the sign-in page is no open redirect.
 */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2000) return '/app';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (!/^\/app(?:[/?#]|$)/.test(value) || /[\\\u0000-\u001f\u007f]/.test(value)) return '/app';
  try {
    const base = 'http://dashboard.invalid';
    const u = new URL(value, base);
    if (u.origin !== base || !/^\/app(?:\/|$)/.test(u.pathname)) return '/app';
    if (/^\/app\/sign-(in|out)(\/|$)/.test(u.pathname)) return '/app';
    return `${u.pathname}${u.search}`;
  } catch {
    return '/app';
  }
}

type Status = 400 | 403 | 404 | 409 | 422 | 429;
type Problem = { message: string; hint?: string; fields?: Array<{ path: string; message: string }>; status: Status };

/** An ApiError as the page shows it; the wait of a rate limit in words. */
function problemOf(err: ApiError, then = 'ask for a new code'): Problem {
  const wait = err.details?.retry_after_s;
  const hint =
    err.code === 'rate_limited' && typeof wait === 'number'
      ? `Wait ${wait < 120 ? `${wait} seconds` : `${Math.ceil(wait / 60)} minutes`}, then ${then}.`
      : err.hint;
  const status = ([400, 403, 404, 409, 422, 429] as const).find((x) => x === err.status) ?? 400;
  return { message: err.message, hint, fields: issuesOf(err), status };
}

const fieldError = (p: Problem | undefined, name: string) => p?.fields?.find((f) => f.path === name)?.message;

function emailForm(c: Context<DashEnv>, next: string, email: string, problem?: Problem) {
  const err = fieldError(problem, 'email');
  return page(
    c,
    { title: 'Sign in', status: problem?.status ?? 200 },
    <section class="card">
      <h1>Sign in</h1>
      <p class="muted">We email you a 6-digit code; no password needed. A new address gets its own organization.</p>
      {problem ? <ErrorBox message={problem.message} hint={problem.hint} /> : null}
      <form method="post" action="/app/sign-in">
        <CsrfField c={c} />
        <input type="hidden" name="next" value={next} />
        <label for="email">Email address</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="email"
          required
          value={email}
          aria-invalid={err ? 'true' : undefined}
          aria-describedby={err ? 'email-error' : undefined}
        />
        <FieldMessage id="email-error" message={err} />
        <button type="submit">Email me a code</button>
      </form>
    </section>,
  );
}

function codeForm(c: Context<DashEnv>, next: string, email: string, problem?: Problem) {
  const err = fieldError(problem, 'code') ?? fieldError(problem, 'email');
  return page(
    c,
    { title: 'Enter your code', status: problem?.status ?? 200 },
    <section class="card">
      <h1>Enter your code</h1>
      <p>
        We sent a 6-digit code to <strong>{email}</strong>. It is valid for 10 minutes and allows{' '}
        {c.var.deps.config.signInGuessesPerAddress} tries.
      </p>
      {problem ? <ErrorBox message={problem.message} hint={problem.hint} /> : null}
      <form method="post" action="/app/sign-in/code">
        <CsrfField c={c} />
        <input type="hidden" name="next" value={next} />
        <input type="hidden" name="email" value={email} />
        <label for="code">Code</label>
        <input
          id="code"
          name="code"
          inputmode="numeric"
          autocomplete="one-time-code"
          pattern="[0-9 ]{6,7}"
          maxlength={7}
          required
          aria-invalid={err ? 'true' : undefined}
          aria-describedby={err ? 'code-error' : undefined}
        />
        <FieldMessage id="code-error" message={err} />
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">
        No mail? <a href={`/app/sign-in?next=${encodeURIComponent(next)}`}>Use another address or ask again</a>.
      </p>
    </section>,
  );
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Sign in with an emailed code, sign out, switch organization. */
export function registerAuthPages(dash: Hono<DashEnv>): void {
  dash.get('/sign-in', (c) => {
    const next = safeNext(c.req.query('next'));
    if (c.var.actor) return c.redirect(next, 303);
    return emailForm(c, next, '');
  });

  dash.post('/sign-in', async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(form.next);
    const email = str(form.email).trim();
    try {
      const body = bodyFor(authOps.requestCode, { email });
      await requestCode(c.var.deps, body.email, c.var.clientIp);
      return c.redirect(
        `/app/sign-in/code?email=${encodeURIComponent(body.email)}&next=${encodeURIComponent(next)}`,
        303,
      );
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.headers?.['Retry-After']) c.header('Retry-After', err.headers['Retry-After']);
      return emailForm(c, next, email, problemOf(err));
    }
  });

  dash.get('/sign-in/code', (c) => {
    const next = safeNext(c.req.query('next'));
    if (c.var.actor) return c.redirect(next, 303);
    const email = str(c.req.query('email')).trim();
    if (!email) return c.redirect(`/app/sign-in?next=${encodeURIComponent(next)}`, 303);
    return codeForm(c, next, email);
  });

  dash.post('/sign-in/code', async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(form.next);
    const email = str(form.email).trim();
    try {
      // People paste "123 456" as the mail shows it; the API takes the six digits.
      const body = bodyFor(authOps.signIn, { email, code: str(form.code).replace(/\s+/g, '') });
      const deps = c.var.deps;
      // The same budget of tries as POST /v1/auth/sign-in (per address and per IP).
      const s = await signIn(deps, body, await takeCodeTry(deps, body.email, c.var.clientIp));
      // A sign-in over an existing session replaces it, once the code is right: a wrong code leaves
      // the person signed in as they were.
      await signOut(deps, getCookie(c, SESSION_COOKIE));
      setSessionCookie(c, deps, s);
      return c.redirect(next, 303);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.headers?.['Retry-After']) c.header('Retry-After', err.headers['Retry-After']);
      return codeForm(c, next, email, problemOf(err, 'try again'));
    }
  });

  dash.post('/sign-out', async (c) => {
    await signOut(c.var.deps, getCookie(c, SESSION_COOKIE));
    clearSessionCookie(c);
    return c.redirect(`/app/sign-in?notice=${encodeURIComponent('You are signed out.')}`, 303);
  });

  dash.post('/switch-org', async (c) => {
    allow(c, { 'x-scope': organizationOps.switch['x-scope'] }); // (its params are the id below)
    const form = await c.req.parseBody();
    const id = str(form.org_id);
    if (!id) throw new ApiError('validation_failed', 'Choose an organization to switch to.');
    const org = await switchOrganization(c.var.deps, c.var.actor, id);
    return done(c, '/app', `You are now working in ${org.name}.`);
  });
}
