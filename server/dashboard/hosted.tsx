/**
 * The hosted form page, GET /f/{formId}: public (no sign-in), rendered from the form's current
 * schema and ui hints by the embed's own field renderer, posting to the intake (/s/{formId}).
 * After a schema_violation the intake answers a post from this page with this page again: the
 * values kept and each error next to its field (hostedFormResponse).
 */

import crypto from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { html, raw } from 'hono/html';
import type { Child, FC } from 'hono/jsx';
import { isObj, type Obj } from '../../shared/objects.js';
import { ApiError } from '../core/errors.js';
import { canonicalOrigin } from '../domain/checks.js';
import { asksForPow } from '../domain/pow.js';
import type { AppEnv } from '../http/context.js';
import { currentEntry } from '../intake/cache.js';
import {
  controlIds,
  DEFAULT_FIELDS,
  type EmbedField,
  type FieldState,
  fieldsFromSchema,
  fieldsHtml,
} from '../present/embed.js';
import { say } from '../present/intake-pages.js';
import { powScriptUrl, powWidgetHtml } from '../present/pow-widget.js';
import { humanize } from '../schemas/infer.js';
import type { SchemaIssue } from '../schemas/validate.js';
import type { FormRow } from '../services/forms.js';
import { issueRenderToken, renderTokenKey } from '../spam/render-token.js';

export const TURNSTILE_ORIGIN = 'https://challenges.cloudflare.com';
const TURNSTILE_JS = `${TURNSTILE_ORIGIN}/turnstile/v0/api.js`;

/** The page's one stylesheet, inline and allowed by its hash (no 'unsafe-inline'). */
const CSS = `*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f5f6f8}
main{max-width:36rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d9dce1;border-radius:8px}
h1{font-size:1.5rem;margin:0 0 1rem}
h2{font-size:1.1rem;margin:0 0 .5rem}
form p{margin:0 0 1rem}
label{display:block;font-weight:600;margin-bottom:.25rem}
fieldset{border:1px solid #d9dce1;border-radius:6px;margin:0 0 1rem;padding:.5rem 1rem}
fieldset label{font-weight:400}
legend{font-weight:600}
input,select,textarea{font:inherit;width:100%;padding:.5rem;border:1px solid #8a919c;border-radius:4px}
input[type=checkbox],input[type=radio]{width:auto}
textarea{min-height:8rem}
small{display:block;color:#4a505a}
.field-error{color:#a4161a;font-weight:600}
[aria-invalid=true]{border-color:#a4161a;border-width:2px}
.summary{border:2px solid #a4161a;border-radius:6px;padding:.75rem 1rem;margin:0 0 1rem;background:#fff5f5}
.summary a{color:#a4161a}
button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:4px;background:#1f4fd1;color:#fff;cursor:pointer}
button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.muted{color:#4a505a}`;
const CSS_HASH = `'sha256-${crypto.createHash('sha256').update(CSS).digest('base64')}'`;

/** What the hosted page refuses to collect: credentials and payment cards (docs/dashboard.md, "Hosted form pages"). */
const SENSITIVE_NAMES = new Set([
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'passcode',
  'pin',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'csc',
  'cardnumber',
  'ccnumber',
  'ccnum',
  'creditcard',
  'creditcardnumber',
  'debitcard',
  'cardcvc',
  'cardcvv',
  'securitycode',
  'cardsecuritycode',
]);
/** Substrings that give a name or label away wherever they stand ("new_password", "Credit card no."). */
const SENSITIVE_PARTS = [
  'password',
  'passwd',
  'passphrase',
  'creditcard',
  'cardnumber',
  'ccnumber',
  'cardverification',
];
const SENSITIVE_WIDGETS = new Set(['password', 'credit-card', 'creditcard', 'card', 'card-number', 'cc-number']);
const SENSITIVE_FORMATS = new Set(['password', 'credit-card', 'creditcard', 'card-number', 'cc-number']);
/** HTML autocomplete tokens that ask the browser for a password or card. */
const SENSITIVE_AUTOCOMPLETE =
  /\b(current-password|new-password|one-time-code|cc-number|cc-csc|cc-exp|cc-exp-month|cc-exp-year)\b/;

const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Why a field looks like a password or card number, or null. */
function sensitiveReason(name: string, prop: Obj, hint: Obj): string | null {
  const n = squash(name);
  // Words of the name ("card_cvc", "cardCvc" → card, cvc); "pin" only as the whole name (not "pin_code").
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  if (SENSITIVE_NAMES.has(n) || words.some((w) => SENSITIVE_NAMES.has(w) && w !== 'pin')) return `its name "${name}"`;
  if (SENSITIVE_PARTS.some((p) => n.includes(p))) return `its name "${name}"`;
  const label = typeof hint.label === 'string' ? squash(hint.label) : '';
  if (label && (SENSITIVE_NAMES.has(label) || SENSITIVE_PARTS.some((p) => label.includes(p))))
    return `its label "${hint.label}"`;
  const widget = typeof hint.widget === 'string' ? hint.widget.toLowerCase() : '';
  if (SENSITIVE_WIDGETS.has(widget)) return `its ui widget "${hint.widget}"`;
  const format = typeof prop.format === 'string' ? prop.format.toLowerCase() : '';
  if (SENSITIVE_FORMATS.has(format)) return `its format "${prop.format}"`;
  if (typeof hint.autocomplete === 'string' && SENSITIVE_AUTOCOMPLETE.test(hint.autocomplete.toLowerCase()))
    return `its autocomplete hint "${hint.autocomplete}"`;
  return null;
}

/** Every field of the schema (nested ones too) that looks like a password or card number. */
export function sensitiveFields(jsonSchema: unknown, ui: unknown): { field: string; reason: string }[] {
  const out: { field: string; reason: string }[] = [];
  const hints = isObj(ui) ? ui : {};
  const walk = (schema: unknown, prefix: string, depth: number) => {
    if (!isObj(schema) || depth > 8) return;
    const props = isObj(schema.properties) ? schema.properties : {};
    for (const [name, prop] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name;
      const hint = !prefix && isObj(hints[name]) ? hints[name] : {};
      const p = isObj(prop) ? prop : {};
      const reason = sensitiveReason(name, p, hint);
      if (reason) out.push({ field: path, reason });
      walk(p, path, depth + 1);
      if (isObj(p.items)) walk(p.items, path, depth + 1);
    }
  };
  walk(jsonSchema, '', 0);
  return out;
}

/** frame-ancestors from allowed_origins: each origin; "*" any; none listed (or none valid) 'none'. */
export function frameAncestors(allowed: unknown): string {
  if (!Array.isArray(allowed)) return "'none'";
  if (allowed.some((a) => a === '*')) return '*';
  const origins = [...new Set(allowed.map((a) => canonicalOrigin(String(a))).filter((o): o is string => !!o))];
  return origins.length ? origins.join(' ') : "'none'";
}

interface Policy {
  form?: FormRow;
  turnstile?: boolean;
  /** the proof-of-work widget: its script, stylesheet and worker from here, its challenge fetched from here */
  pow?: boolean;
}

function setHeaders(c: Context, base: string, policy: Policy) {
  const ancestors = frameAncestors(policy.form?.settings.allowed_origins);
  // Where the form's post may lead: here, the public base URL (the thanks page), the redirect_url.
  const actions = new Set(["'self'"]);
  for (const u of [base, policy.form?.settings.redirect_url]) {
    const o = typeof u === 'string' ? canonicalOrigin(u) : null;
    if (o) actions.add(o);
  }
  const csp = [
    "default-src 'none'",
    `script-src 'self'${policy.turnstile ? ` ${TURNSTILE_ORIGIN}` : ''}`,
    `style-src ${CSS_HASH}${policy.pow ? " 'self'" : ''}`,
    "img-src 'self' data:",
    ...(policy.turnstile ? [`frame-src ${TURNSTILE_ORIGIN}`, `connect-src ${TURNSTILE_ORIGIN}`] : []),
    ...(policy.pow ? ["connect-src 'self'", "worker-src 'self'"] : []),
    `form-action ${[...actions].join(' ')}`,
    `frame-ancestors ${ancestors}`,
    "base-uri 'none'",
  ].join('; ');
  c.header('Content-Security-Policy', csp);
  if (ancestors === "'none'") c.header('X-Frame-Options', 'DENY');
  c.header('X-Robots-Tag', 'noindex');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'same-origin');
  c.header('Cache-Control', 'no-store');
}

const Shell: FC<{ title: string; turnstile?: boolean; pow?: boolean; children?: Child }> = ({
  title,
  turnstile,
  pow,
  children,
}) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="robots" content="noindex" />
      <title>{title}</title>
      {/* A constant, allowed by its hash in the page's CSP. */}
      <style>{raw(CSS)}</style>
      {turnstile ? <script src={TURNSTILE_JS} async defer></script> : null}
      {pow ? <script type="module" src={powScriptUrl('')}></script> : null}
    </head>
    <body>
      <main>{children}</main>
    </body>
  </html>
);

type Status = 200 | 403 | 404 | 409 | 410 | 422;

/** A small page of the hosted pages' layout and CSP (also the double opt-in's, confirm.tsx). */
export function message(c: Context, base: string, status: Status, title: string, body: Child, form?: FormRow) {
  setHeaders(c, base, { form });
  return c.html(
    html`<!DOCTYPE html>${(
      <Shell title={title}>
        <h1>{title}</h1>
        {body}
      </Shell>
    )}`,
    status,
  );
}

/** A visitor's words for one issue: "Email must be an email address". */
function issueText(issue: SchemaIssue, label: string, rest: string[]): string {
  return `${label}${rest.length ? ` (${rest.join('.')})` : ''} ${say(issue.message)}`;
}

export interface HostedInput {
  form: FormRow;
  schema: { jsonSchema: unknown; ui: unknown } | null;
}

/**
 * The hosted page of a form as a response: the form, or (paused, sensitive fields, a challenge
 * without a site key) a page saying why not. `sent` (the data of a post and its schema issues)
 * renders the values kept and each error next to its field, with status 422.
 */
export async function hostedFormResponse(
  c: Context<AppEnv>,
  { form, schema }: HostedInput,
  sent?: { data: unknown; issues: SchemaIssue[] },
) {
  const deps = c.get('deps');
  const base = deps.config.publicBaseUrl;
  const refused = refusal(c, base, { form, schema });
  if (refused) return refused;
  // The time this page is shown, signed: a post sooner than settings.spam.min_seconds scores too_fast.
  const rendered = issueRenderToken(await renderTokenKey(deps.database), form.id, deps.now().getTime());
  const { turnstile, siteKey, pow } = challengeOf(form);
  const parsed = schema ? fieldsFromSchema(schema.jsonSchema, schema.ui) : [];
  const fields: EmbedField[] = parsed.length ? parsed : DEFAULT_FIELDS;
  const { state, elsewhere } = fieldStates(fields, sent);
  setHeaders(c, base, { form, turnstile, pow });
  const page = (
    <HostedForm
      form={form}
      fields={fields}
      state={state}
      elsewhere={elsewhere}
      sent={!!sent}
      challenge={{ turnstile, siteKey, pow }}
      rendered={rendered}
    />
  );
  return c.html(html`<!DOCTYPE html>${page}`, sent ? 422 : 200);
}

/** Whether the form's challenge is Turnstile (and its site key, '' when none) or proof of work. */
function challengeOf(form: FormRow) {
  const challenge = isObj(form.settings.challenge) ? form.settings.challenge : null;
  const turnstile = challenge?.provider === 'turnstile';
  const siteKey = typeof challenge?.site_key === 'string' ? challenge.site_key : '';
  return { turnstile, siteKey, pow: asksForPow(challenge) };
}

/** The page saying why a form is not shown (paused, sensitive fields, a challenge without a site key), or null. */
function refusal(c: Context<AppEnv>, base: string, { form, schema }: HostedInput) {
  const name = form.name;
  if (form.status === 'paused') {
    return message(
      c,
      base,
      410,
      'This form is closed',
      <p>
        <strong>{name}</strong> is not taking submissions right now. Please try again later or contact the site's owner
        another way.
      </p>,
      form,
    );
  }
  const sensitive = sensitiveFields(schema?.jsonSchema, schema?.ui);
  if (sensitive.length) {
    return message(
      c,
      base,
      409,
      'This form cannot be shown here',
      <>
        <p>
          <strong>{name}</strong> asks for something that looks like a password or a payment card number. Hosted form
          pages never collect those, so this page shows no form at all.
        </p>
        <ul>
          {sensitive.map((s) => (
            <li>
              <code>{s.field}</code>: {s.reason}
            </li>
          ))}
        </ul>
        <p class="muted">
          If you own this form: remove or rename these fields in its schema, or collect them on your own site.
        </p>
      </>,
      form,
    );
  }
  const { turnstile, siteKey } = challengeOf(form);
  if (turnstile && !siteKey) {
    return message(
      c,
      base,
      409,
      'This form cannot be shown here',
      <>
        <p>
          <strong>{name}</strong> asks every visitor to pass a Turnstile challenge, but it has no site key to show the
          challenge with, so a post from this page could never be accepted.
        </p>
        <p class="muted">
          If you own this form: set <code>settings.challenge.site_key</code> (PATCH /v1/forms/{'{id}'}).
        </p>
      </>,
      form,
    );
  }
  return null;
}

/** Each field's posted value and error, and the errors that belong to no field of the page. */
function fieldStates(fields: EmbedField[], sent?: { data: unknown; issues: SchemaIssue[] }) {
  const state: Record<string, FieldState> = {};
  const elsewhere: string[] = [];
  const data = isObj(sent?.data) ? sent.data : {};
  for (const f of fields) if (Object.hasOwn(data, f.name)) state[f.name] = { value: data[f.name] };
  for (const issue of sent?.issues ?? []) {
    const [field, ...rest] = issue.path.split('.');
    const at = fields.findIndex((f) => f.name === field);
    if (issue.path.startsWith('(') || at < 0) {
      elsewhere.push(issue.path.startsWith('(') ? say(issue.message) : issueText(issue, humanize(field), rest));
      continue;
    }
    const text = issueText(issue, fields[at].label, rest);
    const s = state[field] ?? {};
    state[field] = { ...s, error: s.error ? `${s.error}; ${text}` : text };
  }
  return { state, elsewhere };
}

/** The hosted form: a summary of what to fix after a refused post, then the fields, honeypot and challenge. */
const HostedForm: FC<{
  form: FormRow;
  fields: EmbedField[];
  state: Record<string, FieldState>;
  elsewhere: string[];
  sent: boolean;
  challenge: { turnstile: boolean; siteKey: string; pow: boolean };
  rendered: string;
}> = ({ form, fields, state, elsewhere, sent, challenge: { turnstile, siteKey, pow }, rendered }) => {
  const name = form.name;
  const ids = controlIds(fields);
  const placed = fields.filter((f) => state[f.name]?.error);
  const honeypot = String(form.settings.honeypot_field ?? '_gotcha');
  return (
    <Shell title={sent ? `Please check your answers · ${name}` : name} turnstile={turnstile} pow={pow}>
      <h1>{name}</h1>
      {sent ? (
        <div class="summary" role="alert">
          <h2>Please check your answers</h2>
          <p>
            Your submission was kept, but it cannot be accepted as it is. Please fix{' '}
            {placed.length + elsewhere.length === 1 ? 'this' : 'these'} and send it again:
          </p>
          <ul>
            {placed.map((f) => (
              <li>
                <a href={`#${ids[fields.indexOf(f)]}`}>{state[f.name].error}</a>
              </li>
            ))}
            {elsewhere.map((t) => (
              <li>{t}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <form action={`/s/${form.id}`} method="post">
        {/* Built by the embed's renderer, which escapes every label, value and message. */}
        {raw(fieldsHtml(fields, state))}
        <input type="text" name={honeypot} tabindex={-1} autocomplete="off" hidden />
        <input type="hidden" name="_hosted" value="1" />
        <input type="hidden" name="_rendered" value={rendered} />
        {turnstile ? <div class="cf-turnstile" data-sitekey={siteKey}></div> : null}
        {/* The widget solves the form's proof-of-work challenge when the form is sent (domain/pow.ts). */}
        {pow ? raw(powWidgetHtml('', form.id)) : null}
        <p>
          <button type="submit">Send</button>
        </p>
      </form>
    </Shell>
  );
};

/** GET /f/{formId}: public, outside /app and its sign-in. */
export function registerHostedPages(app: OpenAPIHono<AppEnv>) {
  app.get('/f/:formId', async (c) => {
    const base = c.get('deps').config.publicBaseUrl;
    let entry: Awaited<ReturnType<typeof currentEntry>>;
    try {
      entry = await currentEntry(c.get('deps').database, c.req.param('formId'));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 404) {
        return message(
          c,
          base,
          404,
          'Form not found',
          <p>
            There is no form at this address. Please check the link you followed, or ask the site that sent you here for
            a new one.
          </p>,
        );
      }
      return message(c, base, err.status === 410 ? 410 : 404, 'This form is not available', <p>{err.message}</p>);
    }
    return hostedFormResponse(c, entry);
  });
}
