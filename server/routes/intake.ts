import { IncomingMessage } from 'node:http';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { z } from '../../shared/contracts/common.js';
import { intakeOps, type PowChallengeBody, type SubmitResult } from '../../shared/contracts/intake.js';
import { ApiError } from '../core/errors.js';
import { hostedFormResponse } from '../dashboard/hosted.js';
import type { FormRow } from '../db/rows.js';
import { canonicalOrigin, originAllowed } from '../domain/checks.js';
import { issuePowChallenge, powDifficulty } from '../domain/pow.js';
import { type AppEnv, noContent, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { currentEntry, intakeEntry } from '../intake/cache.js';
import { receive } from '../intake/receive.js';
import type { Outcome } from '../intake/submit.js';
import {
  alreadyReceivedPage,
  fixAnswersPage,
  originRejectedPage,
  rateLimitedPage,
  thanksPage,
} from '../present/intake-pages.js';
import type { SchemaIssue } from '../schemas/validate.js';
import { issueRenderToken, renderTokenKey } from '../spam/render-token.js';

/**
 * The Node request this one was made from (@hono/node-server's bindings), for intake to take its
 * body from the parser's buffer. None in process (app.request), nor for a request forwarded in
 * process with another request's bindings (the MCP route's): that one's URL is not this path.
 */
function nodeRequestOf(c: Context<AppEnv>): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage) || incoming.url === undefined) return undefined;
  const query = incoming.url.indexOf('?');
  return (query < 0 ? incoming.url : incoming.url.slice(0, query)) === c.req.path ? incoming : undefined;
}

/** CORS per the spec: an empty allowed_origins lets any origin post and echoes it. */
function cors(c: Context<AppEnv>, form: FormRow) {
  const origin = c.req.header('origin');
  c.header('Vary', 'Origin');
  if (origin && originAllowed(form.settings.allowed_origins, canonicalOrigin(origin))) {
    c.header('Access-Control-Allow-Origin', origin);
    c.header('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
  } else {
    c.header('Access-Control-Allow-Origin', undefined);
    c.header('Access-Control-Expose-Headers', undefined);
  }
}

function wantsJson(c: Context<AppEnv>, encoding: Outcome['encoding']) {
  if (encoding === 'json') return true;
  const accept = c.req.header('accept') ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

/**
 * A redirect target as a Location value: an absolute http(s) URL, serialized (non-ASCII
 * percent-encoded). Null for anything else, and for a value holding control characters: the URL
 * parser would silently drop a CR or LF, turning a header-injection attempt into a "valid" target.
 */
function locationOf(value: unknown): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (typeof value !== 'string' || /[\u0000-\u001f\u007f]/.test(value)) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The host (name and port) of a URL; null when it is none. */
function hostOf(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * Whether a post may send its visitor on to `wanted` (an http(s) URL). A form that lists origins
 * takes a listed one. A form open to every site (no allowed_origins, or "*") takes only the host
 * the post came from (its Origin, else its Referer) or the host of the form's own redirect_url:
 * the service's origin is never an open redirect to anywhere.
 */
function redirectAllowed(c: Context<AppEnv>, settings: FormRow['settings'], wanted: string): boolean {
  const allowed = Array.isArray(settings.allowed_origins) ? settings.allowed_origins : [];
  const listed = allowed.filter((a) => a !== '*');
  if (listed.length && originAllowed(listed, canonicalOrigin(wanted))) return true;
  if (listed.length && !allowed.includes('*')) return false;
  const host = hostOf(wanted);
  const from = [hostOf(c.req.header('origin')), hostOf(c.req.header('referer')), hostOf(str(settings.redirect_url))];
  return host !== null && from.includes(host);
}

const str = (v: unknown) => (typeof v === 'string' ? v : null);

/** 303 target: an allowed _redirect (see redirectAllowed), else redirect_url, else the hosted thanks page. */
function redirectTarget(c: Context<AppEnv>, out: Outcome): string {
  const settings = out.form.settings;
  const wanted = locationOf(out.control.redirect);
  if (wanted && redirectAllowed(c, settings, wanted)) return wanted;
  return locationOf(settings.redirect_url) ?? `${c.get('deps').config.publicBaseUrl}/s/${out.form.id}/thanks`;
}

export function registerIntake(app: OpenAPIHono<AppEnv>) {
  mount(app, intakeOps.submit, async (c) => {
    const deps = c.get('deps');
    // The kept entry answers CORS for errors before the write; the write checks it is current, and
    // the form it finally decided with answers the rest.
    const { entry, out } = await receive(
      deps,
      c.req.valid('param').formId,
      {
        req: c.req.raw,
        ip: c.get('clientIp'),
        header: (n) => c.req.header(n),
        requestId: c.get('requestId'),
        incoming: nodeRequestOf(c),
      },
      (first) => cors(c, first.form),
    );
    cors(c, out.form);
    const s = out.submission;
    // A browser's form post gets pages, a script or server JSON; both learn the same.
    const html = !wantsJson(c, out.encoding);
    const name = out.form.name;
    if (s.quarantineReason === 'rate_limited') {
      const wait = out.retryAfter ?? 60;
      if (html) return c.html(rateLimitedPage(name, wait), 429, { 'Retry-After': String(wait) }) as never;
      throw new ApiError('rate_limited', 'Too many submissions from this address; this one is stored as quarantined.', {
        headers: { 'Retry-After': String(wait) },
        details: { submission_id: s.id, retry_after_s: wait },
      });
    }
    const origin = c.req.header('origin');
    if (s.quarantineReason === 'origin_rejected' && origin) {
      if (html) return c.html(originRejectedPage(name, origin), 403) as never;
      throw new ApiError(
        'origin_rejected',
        `Origin ${origin} may not post to this form; the submission is stored as quarantined.`,
        {
          details: { submission_id: s.id },
        },
      );
    }
    // The visitor can fix a schema violation: never a "received" page for it. (Spam gets the
    // ordinary answer below, so a bot learns nothing.)
    if (html && s.quarantineReason === 'schema_violation') {
      // A post from the hosted page comes back to it: values kept, each error next to its field.
      if (out.control.hosted) {
        return hostedFormResponse(
          c,
          { form: out.form, schema: entry.schema },
          { data: s.data, issues: (s.issues ?? []) as SchemaIssue[] },
        ) as never;
      }
      return c.html(fixAnswersPage(name, (s.issues ?? []) as SchemaIssue[], entry.schema?.ui), 422) as never;
    }
    const paused = out.form.status === 'paused';
    // settings.unique: the person learns it was already received rather than a second "thank you".
    const duplicate = s.quarantineReason === 'duplicate';
    if (html && duplicate) return c.html(alreadyReceivedPage(name), 200) as never;
    if (html) return c.redirect(redirectTarget(c, out), 303) as never;
    const body: z.output<typeof SubmitResult> = {
      ok: s.status !== 'quarantined',
      submission_id: s.id,
      status: s.status as z.output<typeof SubmitResult>['status'],
      ...(out.idempotent ? { idempotent: true } : {}),
      ...(s.test ? { deliveries: out.deliveryIds } : {}),
      ...(out.fileIds.length ? { attachments: out.fileIds.map((id) => ({ id })) } : {}),
      ...(paused ? { paused: true } : {}),
      ...(duplicate ? { duplicate: true } : {}),
    };
    return send(c, body, paused ? 202 : 200);
  });

  mount(app, intakeOps.preflight, async (c) => {
    await intakeEntry(c.get('deps').database, c.req.valid('param').formId);
    // Every origin may send its POST: one from outside allowed_origins is then stored quarantined
    // (origin_rejected) and answered without Access-Control-Allow-Origin, so its page still reads
    // nothing. Refusing here would lose the submission in the browser instead.
    const origin = c.req.header('origin');
    c.header('Vary', 'Origin');
    if (origin) c.header('Access-Control-Allow-Origin', origin);
    c.header('Access-Control-Allow-Methods', 'POST, OPTIONS');
    c.header('Access-Control-Allow-Headers', 'Content-Type, Accept, Idempotency-Key, X-Altcha');
    c.header('Access-Control-Max-Age', '600');
    return noContent(c);
  });

  // Open to every origin and never cached: a challenge is good once (domain/pow.ts).
  mount(app, intakeOps.challenge, async (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'no-store');
    const deps = c.get('deps');
    const { form } = await intakeEntry(deps.database, c.req.valid('param').formId);
    const challenge = await issuePowChallenge(deps, form.id, powDifficulty(form.settings.challenge), deps.now());
    return send(c, challenge as z.output<typeof PowChallengeBody>, 200);
  });

  mount(app, intakeOps.thanks, async (c) => {
    const { form } = await currentEntry(c.get('deps').database, c.req.valid('param').formId);
    return c.html(thanksPage(form.name), 200) as never;
  });

  mount(app, intakeOps.render, async (c) => {
    // Always CORS-open, errors included: the owner's page on any origin reads it when it loads.
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'no-store');
    const deps = c.get('deps');
    const { form } = await intakeEntry(deps.database, c.req.valid('param').formId);
    return send(c, { token: issueRenderToken(await renderTokenKey(deps.database), form.id, deps.now().getTime()) });
  });

  mount(app, intakeOps.renderPreflight, async (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Access-Control-Allow-Methods', 'GET, OPTIONS');
    c.header('Access-Control-Allow-Headers', 'Content-Type, Accept');
    c.header('Access-Control-Max-Age', '86400');
    return c.body(null, 204) as never;
  });
}
