import type { Context, Hono } from 'hono';
import { organizationOps } from '../../../shared/contracts/organizations.js';
import { spamOps } from '../../../shared/contracts/spam.js';
import { ApiError } from '../../core/errors.js';
import { namesOf } from '../../services/names.js';
import { updateOrganization } from '../../services/organizations.js';
import { forgetSpamModel, spamFilter } from '../../services/spam.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor } from '../input.js';
import { CsrfField, done, page } from '../render.js';
import { fieldsOf, one } from './org-common.js';
import { validationIssues } from './routing-ui.js';
import { KINDS, LISTS, ListsCard, type ListValues, listValues, MarksCard, ModelCard } from './spam/cards.js';

/** Whether the session may change the lists and forget the model (the services' rule: not a member). */
const isManager = (c: Context<DashEnv>) => c.var.actor.role === 'owner' || c.var.actor.role === 'admin';

/**
 * The Spam page: the organization's lists, what the filter learned, and the latest marks. `edited`
 * is a refused save: its values stay in the form, each bad entry marked under its list.
 */
async function spamPage(c: Context<DashEnv>, edited?: { values: ListValues; err: ApiError }) {
  allow(c, spamOps.get);
  const { deps, actor } = c.var;
  const filter = await spamFilter(deps, actor);
  const forms = await namesOf(
    deps,
    actor,
    'forms',
    filter.recent_marks.map((m) => m.form_id),
  );
  const manager = isManager(c);
  const error = edited ? (validationIssues(edited.err) ?? undefined) : undefined;
  return page(
    c,
    { title: 'Spam', section: 'spam', status: edited ? 422 : 200 },
    <>
      <h1>Spam</h1>
      <p class="muted">
        formsvc scores every submission on this server and records why; see the <em>Spam signals</em> on a submission.
        Spam is stored, never delivered, and listed in the <a href="/app?status=spam">inbox</a>.
      </p>
      <ListsCard c={c} values={edited?.values ?? listValues(filter.lists)} edit={manager} error={error} />
      <ModelCard model={filter.model} manager={manager} />
      <MarksCard marks={filter.recent_marks} forms={forms} />
    </>,
  );
}

/** The posted textareas as lists: one entry a line, blank lines and surrounding spaces dropped. */
function listsOf(values: ListValues) {
  const lists: Record<string, Record<string, string[]>> = {};
  for (const l of LISTS) {
    const kinds: Record<string, string[]> = {};
    for (const k of KINDS) {
      const entries = values[`${l}_${k}`]
        .split(/\r?\n/)
        .map((e) => e.trim())
        .filter(Boolean);
      if (entries.length) kinds[k] = entries;
    }
    if (Object.keys(kinds).length) lists[l] = kinds;
  }
  // No list at all: the key is removed (null), as PATCH /v1/organizations/{id} documents.
  return Object.keys(lists).length ? lists : null;
}

/** Saves the lists with PATCH /v1/organizations/{id}'s service; a refused entry re-renders the form. */
async function saveLists(c: Context<DashEnv>) {
  allow(c, organizationOps.update);
  const f = await fieldsOf(c);
  const values = {} as ListValues;
  for (const l of LISTS) for (const k of KINDS) values[`${l}_${k}`] = one(f, `${l}_${k}`);
  try {
    const body = bodyFor(organizationOps.update, { settings: { spam: listsOf(values) } });
    await updateOrganization(c.var.deps, c.var.actor, c.var.actor.orgId, body);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'validation_failed') return spamPage(c, { values, err });
    throw err;
  }
  return done(c, '/app/spam', 'Lists saved. New submissions are checked against them within seconds.');
}

/** The confirmation before forgetting (works without JavaScript). */
function forgetConfirm(c: Context<DashEnv>) {
  allow(c, spamOps.forget);
  if (!isManager(c)) {
    throw new ApiError('forbidden', 'Only an owner or admin can make the spam filter forget what it learned.');
  }
  return page(
    c,
    { title: 'Forget what the filter learned', section: 'spam' },
    <>
      <p>
        <a href="/app/spam">← Spam</a>
      </p>
      <h1>Forget what the filter learned</h1>
      <p>
        Every mark it learned from (Mark as spam, Not spam) is forgotten, and it scores neutral until new marks. The
        block and allow lists stay, and no submission changes.
      </p>
      <form method="post" action="/app/spam/forget" class="row">
        <CsrfField c={c} />
        <button type="submit" class="danger">
          Yes, forget it all
        </button>
        <a class="button secondary" href="/app/spam">
          Cancel
        </a>
      </form>
    </>,
  );
}

export function registerSpamPages(dash: Hono<DashEnv>): void {
  dash.get('/spam', (c) => spamPage(c));
  dash.post('/spam/lists', saveLists);
  dash.get('/spam/forget', forgetConfirm);
  dash.post('/spam/forget', async (c) => {
    allow(c, spamOps.forget);
    await forgetSpamModel(c.var.deps, c.var.actor);
    return done(c, '/app/spam', 'The filter forgot what it learned. The lists stay.');
  });
}
