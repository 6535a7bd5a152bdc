import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { formOps } from '../../../shared/contracts/forms.js';
import { organizationOps } from '../../../shared/contracts/organizations.js';
import { SPAM_REASONS, SUBMISSION_STATUSES, submissionOps } from '../../../shared/contracts/submissions.js';
import { ApiError } from '../../core/errors.js';
import { pageOf } from '../../core/pagination.js';
import { canonicalOrigin } from '../../domain/checks.js';
import { asksForPow, selfSolvedPow } from '../../domain/pow.js';
import { receive } from '../../intake/receive.js';
import { sampleValue } from '../../present/embed.js';
import { submitUrl } from '../../present/forms.js';
import { formEmbed, formNames } from '../../services/forms.js';
import { listOrganizations } from '../../services/organizations.js';
import { listSubmissions } from '../../services/submissions.js';
import { FilterBar, named, Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, issuesOf, queryFor } from '../input.js';
import { Badge, Copyable, done, Empty, ErrorBox, PostForm, page, Time } from '../render.js';
import { Choice, StatusFilter } from './routing-ui.js';

type Item = Awaited<ReturnType<typeof listSubmissions>>['data'][number];
type Names = Map<string, string>;

const FILTER_KEYS = ['form_id', 'status', 'test', 'q', 'spam_reason'] as const;

/** The test filter's choices besides "Test and real" (the API's `test` query takes the strings). */
const TEST_CHOICES = [
  { id: 'false', name: 'Real only' },
  { id: 'true', name: 'Tests only' },
];
type Filters = Partial<Record<(typeof FILTER_KEYS)[number] | 'limit' | 'cursor', string>>;

/** The inbox's filters from the query string; empty fields (a submitted blank select) are left out. */
function filtersOf(c: Context<DashEnv>, withCursor: boolean): Filters {
  const out: Filters = {};
  // limit (page size) is kept through the links, though the form does not offer it.
  for (const k of [...FILTER_KEYS, 'limit' as const, ...(withCursor ? (['cursor'] as const) : [])]) {
    const v = c.req.query(k)?.trim();
    if (v) out[k] = v;
  }
  return out;
}

const qs = (f: Filters) => new URLSearchParams(f as Record<string, string>).toString();

/**
 * Up to 140 characters of the data's first values, for the list (the page shows everything). A file
 * field's value is the file's id: left out (the row says how many files came).
 */
export function summaryOf(data: unknown, files: ReadonlyArray<{ id: string }> = []): string {
  if (!data || typeof data !== 'object') return '';
  const fileIds = new Set(files.map((f) => f.id));
  const parts: string[] = [];
  for (const v of Object.values(data as Record<string, unknown>)) {
    if (typeof v === 'string' && fileIds.has(v)) continue;
    if (typeof v === 'string' && v.trim()) parts.push(v.trim());
    else if (typeof v === 'number' || typeof v === 'boolean') parts.push(String(v));
    if (parts.join(' · ').length > 140) break;
  }
  const s = parts.join(' · ').replace(/\s+/g, ' ');
  return s.length > 140 ? `${s.slice(0, 139)}…` : s;
}

/** The rows of the list: the whole page's table body, and what /app/inbox/rows answers for live updates. */
const Rows: FC<{ items: Item[]; names: Names; filtered: boolean }> = ({ items, names, filtered }) => (
  <>
    {items.length ? (
      items.map((s) => (
        <tr>
          <td>
            <Time at={s.received_at} />
          </td>
          <td>
            <a href={`/app/submissions/${encodeURIComponent(s.id)}`}>{summaryOf(s.data, s.attachments) || s.id}</a>
            {s.attachments.length ? (
              <span class="muted">{` · ${s.attachments.length} file${s.attachments.length > 1 ? 's' : ''}`}</span>
            ) : null}
          </td>
          <td>{names.get(s.form_id) ?? s.form_id}</td>
          <td>
            <Badge value={s.status} />
            {s.quarantine_reason ? <span class="muted">{` ${s.quarantine_reason.replace(/_/g, ' ')}`}</span> : null}
            {s.status !== 'received' && s.spam.reasons.length ? (
              <div class="muted mono">{s.spam.reasons.slice(0, 3).join(', ')}</div>
            ) : null}
            {s.test ? (
              <>
                {' '}
                <Badge value="test" />
              </>
            ) : null}
          </td>
        </tr>
      ))
    ) : (
      <tr>
        <td colspan={4} class="muted">
          {filtered
            ? 'No submission matches these filters.'
            : 'No submissions yet. They appear here as they arrive, without reloading.'}
        </td>
      </tr>
    )}
  </>
);

/** Runs the list as GET /v1/submissions does, for the session. */
async function load(c: Context<DashEnv>, filters: Filters) {
  allow(c, submissionOps.list);
  const q = queryFor(submissionOps.list, filters);
  return listSubmissions(c.var.deps, c.var.actor, pageOf(q, 'submission'), q);
}

async function namesOf(c: Context<DashEnv>) {
  const rows = await formNames(c.var.deps.database.db, c.var.actor.orgId);
  return { rows, map: new Map(rows.map((f) => [f.id, f.name])) };
}

/** The person's organizations (the switcher), as GET /v1/organizations lists them. */
async function orgsOf(c: Context<DashEnv>) {
  allow(c, organizationOps.list);
  return (await listOrganizations(c.var.deps, c.var.actor, pageOf({ limit: 200 }, 'organization'))).data;
}
type Orgs = Awaited<ReturnType<typeof orgsOf>>;

/** A selector of the person's organizations, when there is more than one. */
const OrgSwitcher: FC<{ c: Context<DashEnv>; orgs: Orgs }> = ({ c, orgs }) => {
  if (orgs.length < 2) {
    const only = orgs[0];
    return only ? <p class="muted">{`Organization: ${only.name}`}</p> : null;
  }
  return (
    <PostForm c={c} action="/app/switch-org" class="row">
      <div>
        <label for="org_id">Organization</label>
        <select id="org_id" name="org_id">
          {orgs.map((o) => (
            <option value={o.id} selected={o.is_active}>
              {`${o.name}${o.role ? ` (${o.role})` : ''}`}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" class="secondary">
        Switch
      </button>
    </PostForm>
  );
};

/** An empty organization: the first form's embed and a test button, or how to make a form. */
async function firstEmbed(c: Context<DashEnv>, forms: Array<{ id: string; name: string }>) {
  const first = forms[0];
  if (!first) return null;
  allow(c, { 'x-scope': formOps.embed['x-scope'] });
  return { ...first, embed: (await formEmbed(c.var.deps, c.var.actor, first.id)).embed };
}

const FirstSteps: FC<{ c: Context<DashEnv>; first: Awaited<ReturnType<typeof firstEmbed>> }> = ({ c, first }) => {
  if (!first) {
    return (
      <Empty title="No forms yet">
        <p>
          Submissions arrive through a form. <a href="/app/forms">Create a form</a>, paste its embed snippet into your
          site, and what visitors send shows up here.
        </p>
      </Empty>
    );
  }
  const { embed } = first;
  return (
    <Empty title="Nothing here yet">
      <p>
        Paste this into a page of your site; what visitors send to <strong>{first.name}</strong> shows up here.
      </p>
      <Copyable id="embed-html" text={embed.html} label="HTML" multiline />
      <p class="muted">
        It posts to <code>{submitUrl(c.var.deps, first.id)}</code>. Other snippets (fetch, React, Astro, Next.js) are on
        the <a href={`/app/forms/${encodeURIComponent(first.id)}`}>form's page</a>.
      </p>
      <PostForm c={c} action="/app/inbox/test">
        <input type="hidden" name="form_id" value={first.id} />
        <button type="submit">Send a test submission</button>
      </PostForm>
    </Empty>
  );
};

/** The known reason codes, plus one from the link of a submission's signal that the list does not know yet. */
const spamReasonChoices = (current?: string) =>
  named(current && !(SPAM_REASONS as readonly string[]).includes(current) ? [...SPAM_REASONS, current] : SPAM_REASONS);

const FiltersForm: FC<{ f: Filters; forms: Array<{ id: string; name: string }> }> = ({ f, forms }) => (
  <FilterBar
    action="/app"
    label="Filter submissions"
    after={FILTER_KEYS.some((k) => f[k]) ? <a href="/app">Clear</a> : null}
  >
    <div>
      <label for="f-q">Search</label>
      <input id="f-q" name="q" type="search" value={f.q ?? ''} placeholder="words in the data" />
    </div>
    <Choice id="f-form" name="form_id" label="Form" options={forms} value={f.form_id} any="All forms" />
    <StatusFilter id="f-status" statuses={SUBMISSION_STATUSES} value={f.status} />
    <Choice id="f-test" name="test" label="Test" options={TEST_CHOICES} value={f.test} any="Test and real" />
    <Choice
      id="f-spam-reason"
      name="spam_reason"
      label="Spam signal"
      options={spamReasonChoices(f.spam_reason)}
      value={f.spam_reason}
      any="Any or none"
    />
  </FilterBar>
);

/** The inbox: the organization's submissions, newest first, filtered, paged, and live on the first page. */
export function registerInboxPages(dash: Hono<DashEnv>): void {
  dash.get('/', async (c) => {
    const f = filtersOf(c, true);
    const { rows: forms, map: names } = await namesOf(c);
    const filtered = FILTER_KEYS.some((k) => f[k]);
    let list: Awaited<ReturnType<typeof load>>;
    try {
      list = await load(c, f);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'validation_failed') throw err;
      return page(
        c,
        { title: 'Inbox', section: 'inbox', status: 422 },
        <>
          <h1>Inbox</h1>
          <FiltersForm f={f} forms={forms} />
          <ErrorBox message={err.message} hint="Change the filters, or clear them." fields={issuesOf(err)} />
        </>,
      );
    }
    const { cursor, ...firstPage } = f;
    const live = !cursor;
    const empty = !list.data.length && !filtered && !cursor;
    const [orgs, first] = await Promise.all([orgsOf(c), empty ? firstEmbed(c, forms) : null]);
    return page(
      c,
      { title: 'Inbox', section: 'inbox' },
      <>
        <div class="row">
          <h1>Inbox</h1>
          <OrgSwitcher c={c} orgs={orgs} />
        </div>
        <FiltersForm f={f} forms={forms} />
        <Table
          cols={['Received', 'Submission', 'Form', 'Status']}
          caption={live ? 'Newest first; new submissions appear on their own.' : 'Older submissions.'}
          body={{
            id: 'inbox-rows',
            'data-poll': live ? `/app/inbox/rows${qs(firstPage) ? `?${qs(firstPage)}` : ''}` : undefined,
            'data-poll-ms': live ? '4000' : undefined,
          }}
        >
          <Rows items={list.data} names={names} filtered={filtered} />
        </Table>
        <nav class="row" aria-label="Pages">
          {cursor ? <a href={`/app${qs(firstPage) ? `?${qs(firstPage)}` : ''}`}>Newest</a> : null}
          {list.next_cursor ? <a href={`/app?${qs({ ...firstPage, cursor: list.next_cursor })}`}>Older</a> : null}
        </nav>
        {empty ? <FirstSteps c={c} first={first} /> : null}
      </>,
    );
  });

  // The first page's rows alone, for the live list (app.js swaps them in every few seconds).
  dash.get('/inbox/rows', async (c) => {
    const f = filtersOf(c, false);
    const [{ map }, list] = await Promise.all([namesOf(c), load(c, f)]);
    return c.html(<Rows items={list.data} names={map} filtered={FILTER_KEYS.some((k) => f[k])} />);
  });

  dash.post('/inbox/test', sendTestSubmission);
}

/**
 * "Send a test submission": a _test post to the form, through intake as POST /s/{formId} runs it
 * (intake/receive.ts, the route's own call).
 */
async function sendTestSubmission(c: Context<DashEnv>) {
  allow(c, { 'x-scope': formOps.embed['x-scope'] });
  const body = await c.req.parseBody();
  const formId = typeof body.form_id === 'string' ? body.form_id : '';
  const deps = c.var.deps;
  // The form must be this organization's (404 otherwise); its fields get sample values.
  const { form, fields } = await formEmbed(deps, c.var.actor, formId);
  const data: Record<string, unknown> = Object.fromEntries(fields.map((x) => [x.name, sampleValue(x)]));
  // A form that only takes some origins gets the first one it allows, as the API's verify curl sends.
  const allowed = form.settings.allowed_origins;
  const origin = Array.isArray(allowed)
    ? allowed.map((o) => canonicalOrigin(String(o))).find((o) => o !== null)
    : undefined;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': 'formsvc dashboard (test submission)',
    ...(origin ? { origin } : {}),
    // A form that asks for proof of work gets one solved here: the test is the service's own.
    ...(asksForPow(form.settings.challenge) ? { 'x-altcha': await selfSolvedPow(deps, form.id, deps.now()) } : {}),
  };
  const req = new Request(submitUrl(deps, form.id), {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...data, _test: true }),
  });
  const { out } = await receive(deps, form.id, { req, ip: c.var.clientIp, header: (n) => headers[n.toLowerCase()] });
  const status = out.submission.quarantineReason
    ? `quarantined (${out.submission.quarantineReason.replace(/_/g, ' ')})`
    : out.submission.status;
  return done(c, '/app', `A test submission to ${form.name} was stored as ${status}.`);
}
