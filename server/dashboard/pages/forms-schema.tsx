import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { driftOps } from '../../../shared/contracts/drift.js';
import { schemaOps } from '../../../shared/contracts/schemas.js';
import { ApiError } from '../../core/errors.js';
import { pageOf } from '../../core/pagination.js';
import { getFormRow } from '../../domain/form-rows.js';
import { dismissDrift, listDrift } from '../../services/drift.js';
import type { FormRow } from '../../services/forms.js';
import { currentSchemaRow, inferFormSchema, listSchemaVersions, publishSchema } from '../../services/schemas.js';
import { Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, queryFor } from '../input.js';
import { CsrfField, done, Empty, ErrorBox, PostForm, page, Time } from '../render.js';
import { InferCard, VersionsCard } from './forms/schema-cards.js';
import {
  ariaOf,
  type Failure,
  FieldError,
  FormTabs,
  failureOf,
  fieldsOf,
  formPath,
  issuesAt,
  statusOf,
  unclaimed,
} from './forms-ui.js';

/** What the publish form holds: the JSON texts as typed, so a failed publish shows them again. */
interface Editor {
  schema: string;
  ui: string;
  changelog: string;
  inferred: boolean;
}

type Inferred = Awaited<ReturnType<typeof inferFormSchema>>;

interface SchemaPageState {
  editor?: Editor;
  publishFailure?: Failure;
  inferFailure?: Failure;
  inferred?: Inferred;
  status?: ReturnType<typeof statusOf>;
}

/**
 * /app/forms/:id/schema: the versions (POST /v1/forms/{id}/schema publishes, …/versions lists), a JSON
 * editor for the next one, a draft inferred from traffic (…/schema/infer), and open drift (…/drift).
 */
export function registerFormSchemaPages(dash: Hono<DashEnv>) {
  dash.get('/forms/:id/schema', async (c) => {
    allow(c, schemaOps.versions);
    const row = await getFormRow(c.var.deps.database.db, c.var.actor.orgId, c.req.param('id'));
    return schemaPage(c, row, {});
  });

  dash.post('/forms/:id/schema', async (c) => {
    allow(c, schemaOps.publish);
    const { deps, actor } = c.var;
    const row = await getFormRow(deps.database.db, actor.orgId, c.req.param('id'));
    const f = await fieldsOf(c);
    const editor: Editor = {
      schema: f.json_schema ?? '',
      ui: f.ui ?? '',
      changelog: f.changelog ?? '',
      inferred: f.inferred === 'true',
    };
    try {
      // The texts must be JSON before the API's schema can say anything about them.
      const issues = [];
      const schema = parseJson(editor.schema, 'json_schema');
      if ('issue' in schema) issues.push(schema.issue);
      const ui = editor.ui.trim() ? parseJson(editor.ui, 'ui') : { value: undefined };
      if ('issue' in ui) issues.push(ui.issue);
      if (issues.length) {
        throw new ApiError('validation_failed', 'This is not valid JSON yet.', {
          hint: 'Fix the place the message points at (line and column) and publish again.',
          details: { issues },
        });
      }
      const body = bodyFor(schemaOps.publish, {
        json_schema: (schema as { value: unknown }).value,
        ui: (ui as { value: unknown }).value,
        changelog: editor.changelog.trim() || undefined,
        inferred: editor.inferred || undefined,
      });
      const published = await publishSchema(deps, actor, row.id, body);
      return done(c, `${formPath(row.id)}/schema`, `Version ${published.version} published.`);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) throw err;
      return schemaPage(c, row, { editor, publishFailure: failureOf(err), status: statusOf(err) });
    }
  });

  dash.post('/forms/:id/schema/infer', async (c) => {
    allow(c, schemaOps.infer);
    const { deps, actor } = c.var;
    const row = await getFormRow(deps.database.db, actor.orgId, c.req.param('id'));
    const f = await fieldsOf(c);
    try {
      const body = bodyFor(schemaOps.infer, { include_test: f.include_test ? true : undefined });
      const inferred = await inferFormSchema(deps, actor, row.id, body);
      const editor: Editor = {
        schema: JSON.stringify(inferred.draft.json_schema, null, 2),
        ui: JSON.stringify(inferred.draft.ui, null, 2),
        changelog: inferred.draft.changelog,
        inferred: true,
      };
      return schemaPage(c, row, { editor, inferred });
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) throw err;
      return schemaPage(c, row, { inferFailure: failureOf(err), status: statusOf(err) });
    }
  });

  dash.post('/forms/:id/drift/:driftId/dismiss', async (c) => {
    allow(c, driftOps.dismiss);
    const id = c.req.param('id');
    const d = await dismissDrift(c.var.deps, c.var.actor, id, c.req.param('driftId'));
    return done(c, `${formPath(id)}/schema#drift`, `Drift on “${d.field}” dismissed.`);
  });
}

/** JSON.parse with a message that says where: "line 3, column 5". */
export function parseJson(
  text: string,
  path: string,
): { value: unknown } | { issue: { path: string; message: string } } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const msg = (err as Error).message;
    const pos = /at position (\d+)/.exec(msg);
    const at = pos ? Number(pos[1]) : text.length;
    const before = text.slice(0, at).split('\n');
    const line = before.length;
    const column = before[before.length - 1].length + 1;
    const what = msg.replace(/ in JSON at position \d+.*$/, '').replace(/^JSON\.parse: /, '');
    return { issue: { path, message: `Invalid JSON at line ${line}, column ${column}: ${what}.` } };
  }
}

const STARTER = JSON.stringify(
  {
    type: 'object',
    properties: { email: { type: 'string', format: 'email' }, message: { type: 'string' } },
    required: ['email'],
  },
  null,
  2,
);

async function schemaPage(c: Context<DashEnv>, row: FormRow, st: SchemaPageState) {
  const { deps, actor } = c.var;
  allow(c, driftOps.list);
  const vq = queryFor(schemaOps.versions, { cursor: c.req.query('cursor') || undefined });
  const dq = queryFor(driftOps.list, { cursor: c.req.query('drift_cursor') || undefined });
  const [versions, drift, current] = await Promise.all([
    listSchemaVersions(deps, actor, row.id, vq),
    listDrift(deps, actor, row.id, pageOf(dq, 'drift'), { status: 'open' }),
    currentSchemaRow(deps.database.db, row),
  ]);
  const editor: Editor = st.editor ?? {
    schema: current ? JSON.stringify(current.jsonSchema, null, 2) : STARTER,
    ui: current && Object.keys(current.ui as object).length ? JSON.stringify(current.ui, null, 2) : '',
    changelog: '',
    inferred: false,
  };
  const base = `${formPath(row.id)}/schema`;
  return page(
    c,
    { title: `${row.name}: schema`, section: 'forms', status: st.status },
    <>
      <p>
        <a href="/app/forms">← Forms</a>
      </p>
      <h1>{row.name}</h1>
      <FormTabs formId={row.id} current="schema" />
      <p>
        Schema mode <strong>{row.schemaMode}</strong>
        {row.currentSchemaVersion !== null
          ? `, current version ${row.currentSchemaVersion}.`
          : ', no schema published yet.'}{' '}
        <span class="muted">
          observe reports drift only; enforce and managed quarantine submissions that break the schema.
        </span>
      </p>
      <PublishForm c={c} formId={row.id} editor={editor} failure={st.publishFailure} inferred={st.inferred} />
      <InferCard c={c} base={base} failure={st.inferFailure} />
      <VersionsCard versions={versions} current={row.currentSchemaVersion} base={base} />
      <DriftList c={c} formId={row.id} drift={drift} base={base} />
    </>,
  );
}

const PublishForm: FC<{
  c: Context<DashEnv>;
  formId: string;
  editor: Editor;
  failure?: Failure;
  inferred?: Inferred;
}> = ({ c, formId, editor, failure, inferred }) => {
  const issues = failure?.issues ?? [];
  const schemaIssues = issuesAt(issues, 'json_schema');
  const uiIssues = issuesAt(issues, 'ui');
  const changelogIssues = issuesAt(issues, 'changelog');
  const rest = unclaimed(issues, ['json_schema', 'ui', 'changelog']);
  return (
    <section class="card" aria-labelledby="publish">
      <h2 id="publish">Publish a new version</h2>
      {inferred ? (
        <div role="status">
          <p class="notice">
            {`Draft inferred from ${inferred.sample_size} submission${inferred.sample_size === 1 ? '' : 's'}. Review it, then publish.`}
          </p>
          <ul>
            {inferred.fields.map((f) => (
              <li>
                <code>{f.name}</code>: {f.types.join(' or ')}, present in {Math.round(f.presence * 100)} %
                {f.format ? `, ${f.format}` : ''}
                {f.enum ? `, one of ${f.enum.join(', ')}` : ''}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {failure ? <ErrorBox message={failure.message} hint={failure.hint} fields={rest} /> : null}
      <form method="post" action={`${formPath(formId)}/schema`}>
        <CsrfField c={c} />
        <input type="hidden" name="inferred" value={editor.inferred ? 'true' : 'false'} />
        <label for="ed-schema">
          JSON Schema <span class="help">(draft 2020-12, an object at the root)</span>
        </label>
        <textarea
          id="ed-schema"
          name="json_schema"
          rows={16}
          spellcheck={false}
          {...ariaOf(schemaIssues, 'ed-schema-err')}
        >
          {editor.schema}
        </textarea>
        <FieldError id="ed-schema-err" issues={schemaIssues} />
        <label for="ed-ui">
          UI hints <span class="help">(optional JSON: labels, placeholders, order, widgets, help per field)</span>
        </label>
        <textarea id="ed-ui" name="ui" rows={6} spellcheck={false} {...ariaOf(uiIssues, 'ed-ui-err')}>
          {editor.ui}
        </textarea>
        <FieldError id="ed-ui-err" issues={uiIssues} />
        <label for="ed-changelog">Changelog</label>
        <input
          id="ed-changelog"
          name="changelog"
          type="text"
          maxlength={2000}
          value={editor.changelog}
          {...ariaOf(changelogIssues, 'ed-changelog-err')}
        />
        <FieldError id="ed-changelog-err" issues={changelogIssues} />
        <p>
          <button type="submit">Publish version</button>
        </p>
      </form>
    </section>
  );
};

const DriftList: FC<{
  c: Context<DashEnv>;
  formId: string;
  base: string;
  drift: Awaited<ReturnType<typeof listDrift>>;
}> = ({ c, formId, base, drift }) => (
  <section aria-labelledby="drift">
    <h2 id="drift">Open drift</h2>
    {drift.data.length ? (
      <Table cols={['Field', 'Kind', 'Details', 'Submissions', 'Last seen']} action="Action">
        {drift.data.map((d) => (
          <tr>
            <td>
              <code>{d.field}</code>
            </td>
            <td>{d.kind.replace('_', ' ')}</td>
            <td class="mono">{JSON.stringify(d.details)}</td>
            <td>
              {d.count} · <a href={`/app/submissions/${encodeURIComponent(d.last_submission_id)}`}>latest</a>
            </td>
            <td>
              <Time at={d.last_seen_at} />
            </td>
            <td>
              <PostForm c={c} action={`${formPath(formId)}/drift/${encodeURIComponent(d.id)}/dismiss`}>
                <button type="submit" class="secondary" aria-label={`Dismiss drift on ${d.field}`}>
                  Dismiss
                </button>
              </PostForm>
            </td>
          </tr>
        ))}
      </Table>
    ) : (
      <Empty title="No open drift">
        <p>
          Submissions match the current schema. Drift appears here when one carries a field the schema does not know,
          lacks a required one, or has another type.
        </p>
      </Empty>
    )}
    {drift.next_cursor ? (
      <p class="pager">
        <a href={`${base}?drift_cursor=${encodeURIComponent(drift.next_cursor)}#drift`}>More drift</a>
      </p>
    ) : null}
  </section>
);
