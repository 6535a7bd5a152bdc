import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { FORM_STATUSES, formOps, SCHEMA_MODES } from '../../../shared/contracts/forms.js';
import { projectOps } from '../../../shared/contracts/projects.js';
import { pageOf } from '../../core/pagination.js';
import { dailyChart } from '../../services/charts.js';
import { createForm, listForms } from '../../services/forms.js';
import { listProjects } from '../../services/projects.js';
import { DailyChartCard } from '../chart.js';
import { FilterBar, named, Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { Badge, CsrfField, done, Empty, ErrorBox, page, Time } from '../render.js';
import { registerFormDetailPages } from './forms-detail.js';
import { registerFormSchemaPages } from './forms-schema.js';
import {
  ariaOf,
  type Failure,
  FieldError,
  failureOf,
  fieldsOf,
  formPath,
  issuesAt,
  listOfWords,
  statusOf,
  unclaimed,
} from './forms-ui.js';
import { Choice, StatusFilter } from './routing-ui.js';

/**
 * Forms: the list with counts and a create form (/app/forms), one form's settings and embed
 * snippets (forms-detail.tsx), its schema versions, publishing, inference and drift (forms-schema.tsx).
 */
export function registerFormPages(dash: Hono<DashEnv>): void {
  dash.get('/forms', (c) => listPage(c));
  dash.post('/forms', async (c) => {
    const fields = await fieldsOf(c);
    try {
      allow(c, formOps.create);
      const body = bodyFor(formOps.create, {
        name: fields.name ?? '',
        project: fields.project?.trim() || undefined,
        tags: listOfWords(fields.tags, /,/),
        schema_mode: fields.schema_mode || undefined,
      });
      const r = await createForm(c.var.deps, c.var.actor, body);
      return done(c, formPath(r.form.id), 'Form created. Paste one of its embed snippets into your site.');
    } catch (err) {
      return listPage(c, { values: fields, failure: failureOf(err), status: statusOf(err) });
    }
  });
  registerFormDetailPages(dash);
  registerFormSchemaPages(dash);
}

type CreateValues = Record<string, string>;

async function listPage(
  c: Context<DashEnv>,
  created: { values: CreateValues; failure: Failure; status: ReturnType<typeof statusOf> } | null = null,
) {
  const { deps, actor } = c.var;
  allow(c, formOps.list);
  allow(c, projectOps.list);
  // Empty filter fields mean "any"; the rest is checked by the API's own query schema.
  const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([, v]) => v !== ''));
  const q = queryFor(formOps.list, raw);
  const [list, projects, chart] = await Promise.all([
    listForms(deps, actor, pageOf(q, 'form'), q),
    listProjects(deps, actor, pageOf({ limit: 200 }, 'project')),
    // Every form of the organization, or of the project the filter names, summed.
    dailyChart(deps, actor, { project: q.project }),
  ]);
  const projectSlug = new Map(projects.data.map((p) => [p.id, p.slug]));
  const filtered = Boolean(q.project || q.tag || q.status || q.cursor);
  const next = list.next_cursor ? `/app/forms?${new URLSearchParams({ ...raw, cursor: list.next_cursor })}` : null;
  return page(
    c,
    { title: 'Forms', section: 'forms', status: created?.status },
    <>
      <h1>Forms</h1>
      <FilterBar action="/app/forms" label="Filter forms">
        <Choice
          id="f-project"
          name="project"
          label="Project"
          options={named(projects.data.map((p) => p.slug))}
          // The query may name the project by slug or by id; the choice is its slug either way.
          value={projects.data.find((p) => q.project === p.id)?.slug ?? q.project}
          any="Any project"
        />
        <div>
          <label for="f-tag">Tag</label>
          <input id="f-tag" name="tag" type="text" value={q.tag ?? ''} />
        </div>
        <StatusFilter id="f-status" statuses={FORM_STATUSES} value={q.status} />
      </FilterBar>
      {list.data.length ? (
        <DailyChartCard id="chart" subject={q.project ? `project ${q.project}` : 'all forms'} chart={chart} />
      ) : null}
      {list.data.length ? (
        <FormTable forms={list.data} projectSlug={projectSlug} />
      ) : filtered ? (
        <Empty title="No form matches these filters">
          <p>
            <a href="/app/forms">Show every form</a>, or change the filters above.
          </p>
        </Empty>
      ) : (
        <Empty title="No forms yet">
          <p>Create your first form below: it gets a submit URL and embed snippets to paste into your site.</p>
        </Empty>
      )}
      {next ? (
        <p class="pager">
          <a href={next}>Next page</a>
        </p>
      ) : null}
      <CreateForm
        c={c}
        values={created?.values ?? {}}
        failure={created?.failure}
        projects={projects.data.map((p) => p.slug)}
      />
    </>,
  );
}

/** The forms with their project, status, schema and submissions. */
const FormTable: FC<{
  forms: Awaited<ReturnType<typeof listForms>>['data'];
  projectSlug: Map<string, string>;
}> = ({ forms, projectSlug }) => (
  <Table
    cols={['Name', 'Project', 'Status', 'Schema', 'Submissions', 'Last submission', 'Tags']}
    caption="Submissions count stored, non-test submissions."
  >
    {forms.map((f) => (
      <tr>
        <td>
          <a href={formPath(f.id)}>{f.name}</a>
          <div class="muted mono">{f.id}</div>
        </td>
        <td>{projectSlug.get(f.project_id) ?? f.project_id}</td>
        <td>
          <Badge value={f.status} />
        </td>
        <td>
          {f.schema_mode}
          {f.current_schema_version !== null ? ` · v${f.current_schema_version}` : ''}
        </td>
        <td>{f.counts.submissions}</td>
        <td>
          <Time at={f.counts.last_submission_at} />
        </td>
        <td>{f.tags.join(', ')}</td>
      </tr>
    ))}
  </Table>
);
const CLAIMED = ['name', 'project', 'tags', 'schema_mode'];

const CreateForm: FC<{ c: Context<DashEnv>; values: CreateValues; failure?: Failure; projects: string[] }> = ({
  c,
  values,
  failure,
  projects,
}) => {
  const issues = failure?.issues ?? [];
  const at = (p: string) => issuesAt(issues, p);
  return (
    <section class="card" aria-labelledby="new-form">
      <h2 id="new-form">New form</h2>
      {failure ? <ErrorBox message={failure.message} hint={failure.hint} fields={unclaimed(issues, CLAIMED)} /> : null}
      <form method="post" action="/app/forms">
        <CsrfField c={c} />
        <label for="nf-name">Name</label>
        <input
          id="nf-name"
          name="name"
          type="text"
          required
          maxlength={200}
          value={values.name ?? ''}
          {...ariaOf(at('name'), 'nf-name-err')}
        />
        <FieldError id="nf-name-err" issues={at('name')} />
        <label for="nf-project">
          Project <span class="help">(a slug; created when it does not exist; empty means “default”)</span>
        </label>
        <input
          id="nf-project"
          name="project"
          type="text"
          list="nf-projects"
          placeholder="default"
          value={values.project ?? ''}
          {...ariaOf(at('project'), 'nf-project-err')}
        />
        <datalist id="nf-projects">
          {projects.map((p) => (
            <option value={p} />
          ))}
        </datalist>
        <FieldError id="nf-project-err" issues={at('project')} />
        <label for="nf-tags">
          Tags <span class="help">(separated by commas)</span>
        </label>
        <input id="nf-tags" name="tags" type="text" value={values.tags ?? ''} {...ariaOf(at('tags'), 'nf-tags-err')} />
        <FieldError id="nf-tags-err" issues={at('tags')} />
        <label for="nf-mode">Schema mode</label>
        <select id="nf-mode" name="schema_mode" aria-describedby="nf-mode-help">
          {SCHEMA_MODES.map((m) => (
            <option value={m} selected={(values.schema_mode || 'observe') === m}>
              {m}
            </option>
          ))}
        </select>
        <p id="nf-mode-help" class="help">
          observe: accept everything and report drift; enforce: quarantine submissions that break the schema; managed:
          enforce, and serve the schema so the hosted page renders the form from it.
        </p>
        <FieldError id="nf-mode-err" issues={at('schema_mode')} />
        <p>
          <button type="submit">Create form</button>
        </p>
      </form>
    </section>
  );
};
