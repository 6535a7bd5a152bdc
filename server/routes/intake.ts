import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { intakeOps } from '../../shared/contracts/intake.js';
import type { AppEnv } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mount } from '../http/mount.js';
import { currentEntry, intakeEntry } from '../intake/cache.js';
import { canonicalOrigin, originAllowed } from '../intake/checks.js';
import { type FormRow, intake, type Outcome } from '../intake/submit.js';
import { escapeHtml } from '../present/html.js';

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

/** 303 target: _redirect (http(s), and an allowed origin when the form lists some), redirect_url, thanks page. */
function redirectTarget(c: Context<AppEnv>, out: Outcome): string {
  const settings = out.form.settings;
  const wanted = out.control.redirect;
  if (wanted && canonicalOrigin(wanted) && originAllowed(settings.allowed_origins, canonicalOrigin(wanted)))
    return wanted;
  if (typeof settings.redirect_url === 'string' && canonicalOrigin(settings.redirect_url)) return settings.redirect_url;
  return `${c.get('deps').config.publicBaseUrl}/s/${out.form.id}/thanks`;
}

export function registerIntake(app: OpenAPIHono<AppEnv>) {
  mount(app, intakeOps.submit, async (c) => {
    const deps = c.get('deps');
    // The kept entry answers CORS for errors before the write; the write checks it is current, and
    // the form it finally decided with answers the rest.
    const entry = await intakeEntry(deps.database, c.req.valid('param').formId);
    cors(c, entry.form);
    // This process's worker yields to intake while requests queue here (IntakeLoad).
    deps.handoff?.started();
    let out: Outcome;
    try {
      out = await intake(deps, { req: c.req.raw, ip: c.get('clientIp'), header: (n) => c.req.header(n) }, entry);
    } finally {
      deps.handoff?.finished();
    }
    cors(c, out.form);
    const s = out.submission;
    if (s.quarantineReason === 'rate_limited') {
      throw new ApiError('rate_limited', 'Too many submissions from this address; this one is stored as quarantined.', {
        headers: { 'Retry-After': String(out.retryAfter ?? 60) },
        details: { submission_id: s.id, retry_after_s: out.retryAfter ?? 60 },
      });
    }
    if (s.quarantineReason === 'origin_rejected' && c.req.header('origin')) {
      throw new ApiError(
        'origin_rejected',
        `Origin ${c.req.header('origin')} may not post to this form; the submission is stored as quarantined.`,
        {
          details: { submission_id: s.id },
        },
      );
    }
    const paused = out.form.status === 'paused';
    if (!wantsJson(c, out.encoding)) return c.redirect(redirectTarget(c, out), 303) as never;
    const body = {
      ok: s.status !== 'quarantined',
      submission_id: s.id,
      status: s.status,
      ...(out.idempotent ? { idempotent: true } : {}),
      ...(s.test ? { deliveries: out.deliveryIds } : {}),
      ...(out.fileIds.length ? { attachments: out.fileIds.map((id) => ({ id })) } : {}),
      ...(paused ? { paused: true } : {}),
    };
    return c.json(body, paused ? 202 : 200) as never;
  });

  mount(app, intakeOps.preflight, async (c) => {
    const { form } = await currentEntry(c.get('deps').database, c.req.valid('param').formId);
    cors(c, form);
    c.header('Access-Control-Allow-Methods', 'POST, OPTIONS');
    c.header('Access-Control-Allow-Headers', 'Content-Type, Accept, Idempotency-Key');
    c.header('Access-Control-Max-Age', '600');
    return c.body(null, 204) as never;
  });

  mount(app, intakeOps.thanks, async (c) => {
    const { form } = await currentEntry(c.get('deps').database, c.req.valid('param').formId);
    const name = escapeHtml(form.name);
    return c.html(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Thank you · ${name}</title></head><body><main><h1>Thank you!</h1><p>Your submission to <strong>${name}</strong> was received.</p><p><a href="javascript:history.back()">Go back</a></p></main></body></html>`,
      200,
    ) as never;
  });
}
