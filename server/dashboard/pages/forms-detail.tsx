import type { Context, Hono } from 'hono';
import { formOps } from '../../../shared/contracts/forms.js';
import { ApiError } from '../../core/errors.js';
import { getFormRow } from '../../domain/form-rows.js';
import { buildVerify } from '../../present/embed.js';
import { dailyChart } from '../../services/charts.js';
import type { FormRow } from '../../services/forms.js';
import { embedFor, formWithCounts, updateForm } from '../../services/forms.js';
import { DailyChartCard } from '../chart.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor } from '../input.js';
import { Badge, Copyable, done, page, Time } from '../render.js';
import { SettingsForm } from './forms/settings.js';
import { SubmitterMailCard } from './forms/submitter.js';
import { submitterSettingsOf, submitterValuesOf } from './forms/submitter-input.js';
import {
  type Failure,
  FormTabs,
  failureOf,
  fieldsOf,
  formPath,
  listOfWords,
  numberField,
  statusOf,
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
      ...challengeOf(f),
      ...submitterSettingsOf(f),
    },
  };
}

/** The challenge as the form sent it: none (null), proof of work, or left as it is (Turnstile, or not sent). */
function challengeOf(f: Values) {
  if (f.challenge === undefined || f.challenge === 'turnstile') return {};
  if (f.challenge !== 'pow') return { challenge: null };
  const difficulty = numberField(f.challenge_difficulty);
  return { challenge: { provider: 'pow', ...(difficulty === undefined ? {} : { difficulty }) } };
}

/** The settings form's values as the form has them now. */
function valuesOf(form: { name: string; tags: string[]; status: string; schema_mode: string; settings: object }) {
  const s = form.settings as Record<string, unknown>;
  const rate = s.rate_limit as { max?: number; window_s?: number } | null | undefined;
  const challenge = s.challenge as { provider?: unknown; difficulty?: unknown } | null | undefined;
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
    challenge: challenge && typeof challenge.provider === 'string' ? challenge.provider : '',
    challenge_difficulty: typeof challenge?.difficulty === 'number' ? String(challenge.difficulty) : '',
    ...submitterValuesOf(s),
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
  const { deps, actor } = c.var;
  allow(c, formOps.embed);
  const [form, embed, chart] = await Promise.all([
    formWithCounts(deps, row),
    embedFor(deps, row).then((r) => r.embed),
    dailyChart(deps, actor, { formId: row.id }),
  ]);
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
      <DailyChartCard id="chart" subject={form.name} chart={chart} />
      <SettingsForm c={c} formId={form.id} values={failed?.values ?? valuesOf(form)} failure={failed?.failure} />
      <SubmitterMailCard form={row} base={deps.config.publicBaseUrl} />
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
