import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { formOps, SCHEMA_MODES } from '../../../shared/contracts/forms.js';
import { ApiError } from '../../http/errors.js';
import { buildVerify } from '../../present/embed.js';
import { embedFor, type FormRow, formWithCounts, getFormRow, updateForm } from '../../services/forms.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor } from '../input.js';
import { Badge, Copyable, CsrfField, done, ErrorBox, page, Time } from '../render.js';
import {
  ariaOf,
  type Failure,
  FieldError,
  FormTabs,
  failureOf,
  fieldsOf,
  formPath,
  issuesAt,
  listOfWords,
  numberField,
  statusOf,
  unclaimed,
} from './forms-ui.js';

type Values = Record<string, string>;

/** /app/forms/:id: what the form is, its settings (PATCH /v1/forms/{id}), its embed snippets. */
export function registerFormDetailPages(dash: Hono<DashEnv>) {
  dash.get('/forms/:id', async (c) => {
    allow(c, formOps.get);
    const row = await getFormRow(c.var.deps.database.db, c.var.actor.orgId, c.req.param('id'));
    return formPage(c, row, null);
  });

  dash.post('/forms/:id/settings', async (c) => {
    allow(c, formOps.update);
    const { deps, actor } = c.var;
    const id = c.req.param('id');
    // Another organization's form is a 404 page before anything is read from the request.
    const row = await getFormRow(deps.database.db, actor.orgId, id);
    const fields = await fieldsOf(c);
    try {
      const body = bodyFor(formOps.update, settingsBody(fields));
      await updateForm(deps, actor, id, body);
      return done(c, formPath(id), 'Settings saved.');
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) throw err;
      return formPage(c, row, { values: fields, failure: failureOf(err), status: statusOf(err) });
    }
  });
}

/**
 * The settings form as UpdateFormBody. Every known field is sent: empty optional ones clear their
 * setting (null removes a key), except the honeypot, which the API cannot clear (empty keeps it).
 */
function settingsBody(f: Values) {
  const max = numberField(f.rate_max);
  const windowS = numberField(f.rate_window);
  // Left out when empty: a key that is present (even undefined) would replace the stored one.
  const honeypot = f.honeypot_field?.trim();
  return {
    name: f.name ?? '',
    tags: listOfWords(f.tags, /,/) ?? [],
    status: f.paused ? 'paused' : 'active',
    schema_mode: f.schema_mode || undefined,
    settings: {
      allowed_origins: listOfWords(f.allowed_origins) ?? [],
      rate_limit: max === undefined && windowS === undefined ? null : { max, window_s: windowS },
      redirect_url: f.redirect_url?.trim() || null,
      reply_to_field: f.reply_to_field?.trim() || null,
      ...(honeypot ? { honeypot_field: honeypot } : {}),
    },
  };
}

/** The settings form's values as the form has them now. */
function valuesOf(form: { name: string; tags: string[]; status: string; schema_mode: string; settings: object }) {
  const s = form.settings as Record<string, unknown>;
  const rate = s.rate_limit as { max?: number; window_s?: number } | null | undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    name: form.name,
    tags: form.tags.join(', '),
    schema_mode: form.schema_mode,
    paused: form.status === 'paused' ? 'on' : '',
    allowed_origins: Array.isArray(s.allowed_origins) ? s.allowed_origins.map(String).join('\n') : '',
    rate_max: rate?.max !== undefined ? String(rate.max) : '',
    rate_window: rate?.window_s !== undefined ? String(rate.window_s) : '',
    honeypot_field: str(s.honeypot_field),
    redirect_url: str(s.redirect_url),
    reply_to_field: str(s.reply_to_field),
  };
}

const EMBEDS = [
  { key: 'html', label: 'HTML', help: 'a plain form; works without JavaScript' },
  { key: 'fetch', label: 'fetch', help: 'JavaScript that posts JSON' },
  { key: 'react', label: 'React', help: 'a component' },
  { key: 'astro', label: 'Astro', help: 'a component' },
  { key: 'nextjs_action', label: 'Next.js action', help: 'a server action' },
] as const;

async function formPage(
  c: Context<DashEnv>,
  row: FormRow,
  failed: { values: Values; failure: Failure; status: ReturnType<typeof statusOf> } | null,
) {
  const { deps } = c.var;
  allow(c, formOps.embed);
  const [form, embed] = await Promise.all([formWithCounts(deps, row), embedFor(deps, row).then((r) => r.embed)]);
  const verify = buildVerify(form.submit_url, row.settings.allowed_origins);
  const hosted = `/f/${encodeURIComponent(form.id)}`;
  return page(
    c,
    { title: form.name, section: 'forms', status: failed?.status },
    <>
      <p>
        <a href="/app/forms">← Forms</a>
      </p>
      <h1>{form.name}</h1>
      <FormTabs formId={form.id} current="settings" />
      <section class="card" aria-labelledby="about">
        <h2 id="about">About this form</h2>
        <dl class="meta">
          <dt>Id</dt>
          <dd class="mono">{form.id}</dd>
          <dt>Status</dt>
          <dd>
            <Badge value={form.status} />
          </dd>
          <dt>Schema</dt>
          <dd>
            {form.schema_mode}
            {form.current_schema_version !== null ? ` · version ${form.current_schema_version}` : ' · none published'}
          </dd>
          <dt>Submissions</dt>
          <dd>
            {form.counts.submissions} · last <Time at={form.counts.last_submission_at} />
          </dd>
          <dt>Created</dt>
          <dd>
            <Time at={form.created_at} />
          </dd>
          <dt>Hosted page</dt>
          <dd>
            <a href={hosted}>{`Open the hosted form page (${hosted})`}</a>
          </dd>
        </dl>
        <h3>Submit URL</h3>
        <Copyable id="submit-url" text={form.submit_url} label="submit URL" />
      </section>
      <SettingsForm c={c} formId={form.id} values={failed?.values ?? valuesOf(form)} failure={failed?.failure} />
      <section class="card" aria-labelledby="embed">
        <h2 id="embed">Embed snippets</h2>
        <p class="muted">
          Paste one into your site as is: it posts to this form’s submit URL, with its fields from the current schema.
        </p>
        {EMBEDS.map((e) => (
          <>
            <h3>
              {e.label} <span class="help">({e.help})</span>
            </h3>
            <Copyable id={`embed-${e.key}`} text={embed[e.key]} label={`${e.label} snippet`} multiline />
          </>
        ))}
        <h3>Test it from a terminal</h3>
        <Copyable id="embed-verify" text={verify.curl} label="curl command" multiline />
        <p class="muted">{verify.then}</p>
      </section>
    </>,
  );
}

const CLAIMED = [
  'name',
  'tags',
  'status',
  'schema_mode',
  'settings.allowed_origins',
  'settings.rate_limit',
  'settings.honeypot_field',
  'settings.redirect_url',
  'settings.reply_to_field',
];

const SettingsForm: FC<{ c: Context<DashEnv>; formId: string; values: Values; failure?: Failure }> = ({
  c,
  formId,
  values: v,
  failure,
}) => {
  const issues = failure?.issues ?? [];
  const at = (p: string) => issuesAt(issues, p);
  const aria = (path: string, errId: string, helpId?: string) => ariaOf(at(path), errId, helpId);
  return (
    <section class="card" aria-labelledby="settings">
      <h2 id="settings">Settings</h2>
      {failure ? <ErrorBox message={failure.message} hint={failure.hint} fields={unclaimed(issues, CLAIMED)} /> : null}
      <form method="post" action={`${formPath(formId)}/settings`}>
        <CsrfField c={c} />
        <label for="s-name">Name</label>
        <input
          id="s-name"
          name="name"
          type="text"
          required
          maxlength={200}
          value={v.name}
          {...aria('name', 's-name-err')}
        />
        <FieldError id="s-name-err" issues={at('name')} />

        <label for="s-tags">
          Tags <span class="help">(separated by commas)</span>
        </label>
        <input id="s-tags" name="tags" type="text" value={v.tags} {...aria('tags', 's-tags-err')} />
        <FieldError id="s-tags-err" issues={at('tags')} />

        <label for="s-mode">Schema mode</label>
        <select id="s-mode" name="schema_mode" {...aria('schema_mode', 's-mode-err')}>
          {SCHEMA_MODES.map((m) => (
            <option value={m} selected={v.schema_mode === m}>
              {m}
            </option>
          ))}
        </select>
        <FieldError id="s-mode-err" issues={at('schema_mode')} />

        <label for="s-paused">
          <input
            id="s-paused"
            name="paused"
            type="checkbox"
            checked={Boolean(v.paused)}
            aria-describedby="s-paused-help"
          />{' '}
          Paused
        </label>
        <p id="s-paused-help" class="help">
          A paused form still stores its submissions but sends them nowhere (no deliveries) until you clear this box.
        </p>

        <label for="s-origins">Allowed origins</label>
        <textarea
          id="s-origins"
          name="allowed_origins"
          rows={3}
          {...aria('settings.allowed_origins', 's-origins-err', 's-origins-help')}
        >
          {v.allowed_origins}
        </textarea>
        <p id="s-origins-help" class="help">
          One per line, e.g. https://example.com. Empty: any site may post. A post from another origin is quarantined.
        </p>
        <FieldError id="s-origins-err" issues={at('settings.allowed_origins')} />

        <fieldset>
          <legend>Rate limit per client IP</legend>
          <p class="help">Leave both empty for no limit.</p>
          <div class="row">
            <div>
              <label for="s-rate-max">At most (submissions)</label>
              <input
                id="s-rate-max"
                name="rate_max"
                type="text"
                inputmode="numeric"
                value={v.rate_max}
                {...aria('settings.rate_limit.max', 's-rate-max-err')}
              />
              <FieldError id="s-rate-max-err" issues={at('settings.rate_limit.max')} />
            </div>
            <div>
              <label for="s-rate-window">In (seconds)</label>
              <input
                id="s-rate-window"
                name="rate_window"
                type="text"
                inputmode="numeric"
                value={v.rate_window}
                {...aria('settings.rate_limit.window_s', 's-rate-window-err')}
              />
              <FieldError id="s-rate-window-err" issues={at('settings.rate_limit.window_s')} />
            </div>
          </div>
          <FieldError
            id="s-rate-err"
            issues={issuesAt(issues, 'settings.rate_limit').filter(
              (i) => i.path !== 'settings.rate_limit.max' && i.path !== 'settings.rate_limit.window_s',
            )}
          />
        </fieldset>

        <label for="s-honeypot">Honeypot field</label>
        <input
          id="s-honeypot"
          name="honeypot_field"
          type="text"
          placeholder="_gotcha"
          value={v.honeypot_field}
          {...aria('settings.honeypot_field', 's-honeypot-err', 's-honeypot-help')}
        />
        <p id="s-honeypot-help" class="help">
          A hidden field bots fill in; a submission with it filled is spam. Empty keeps the current one (default
          _gotcha).
        </p>
        <FieldError id="s-honeypot-err" issues={at('settings.honeypot_field')} />

        <label for="s-redirect">Redirect URL</label>
        <input
          id="s-redirect"
          name="redirect_url"
          type="text"
          inputmode="url"
          placeholder="https://example.com/thanks"
          value={v.redirect_url}
          {...aria('settings.redirect_url', 's-redirect-err', 's-redirect-help')}
        />
        <p id="s-redirect-help" class="help">
          Where a browser goes after posting the HTML form. Empty: formsvc’s own thank-you page.
        </p>
        <FieldError id="s-redirect-err" issues={at('settings.redirect_url')} />

        <label for="s-replyto">Reply-to field</label>
        <input
          id="s-replyto"
          name="reply_to_field"
          type="text"
          placeholder="email"
          value={v.reply_to_field}
          {...aria('settings.reply_to_field', 's-replyto-err', 's-replyto-help')}
        />
        <p id="s-replyto-help" class="help">
          The field whose email address becomes Reply-To in notification emails. Empty: the first field that holds an
          email address.
        </p>
        <FieldError id="s-replyto-err" issues={at('settings.reply_to_field')} />

        <p>
          <button type="submit">Save settings</button>
        </p>
      </form>
    </section>
  );
};
