import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { spamFilter } from '../../../services/spam.js';
import { FieldMessage, Table } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Badge, CsrfField, ErrorBox, Time } from '../../render.js';
import { issueAt } from '../org-common.js';

export type Filter = Awaited<ReturnType<typeof spamFilter>>;
export type Issue = { path: string; message: string };

/** The two lists and their four kinds of entry, in the order the page shows them. */
export const LISTS = ['block', 'allow'] as const;
export const KINDS = ['emails', 'domains', 'ips', 'keywords'] as const;
export type ListName = (typeof LISTS)[number];
export type Kind = (typeof KINDS)[number];
/** The lists as the form holds them: one textarea per list and kind, one entry a line. */
export type ListValues = Record<`${ListName}_${Kind}`, string>;

const KIND_LABEL: Record<Kind, string> = {
  emails: 'Email addresses',
  domains: 'Domains',
  ips: 'IP addresses or CIDRs',
  keywords: 'Words or phrases',
};
const KIND_HELP: Record<Kind, string> = {
  emails: 'Whole addresses, e.g. someone@example.com.',
  domains: 'A domain matches its subdomains too, e.g. example.com.',
  ips: 'Addresses or ranges, e.g. 203.0.113.7 or 2001:db8::/32.',
  keywords: 'Matched case-insensitively on word boundaries.',
};
const LIST_ABOUT: Record<ListName, { title: string; about: string }> = {
  block: { title: 'Block list', about: 'A submission that matches is stored as spam (and never delivered).' },
  allow: { title: 'Allow list', about: 'A submission that matches is never spam, unless it fills the honeypot.' },
};

/** The stored lists as the form's text: one entry a line. */
export function listValues(lists: Filter['lists']): ListValues {
  const out = {} as ListValues;
  for (const l of LISTS) for (const k of KINDS) out[`${l}_${k}`] = lists[l][k].join('\n');
  return out;
}

/** One list kind's textarea (an owner's or admin's) or its entries as text (a member's). */
const ListField: FC<{ list: ListName; kind: Kind; value: string; issues: Issue[]; edit: boolean }> = (p) => {
  const id = `spam-${p.list}-${p.kind}`;
  const error = issueAt(p.issues, `settings.spam.${p.list}.${p.kind}`);
  const entries = p.value.split('\n').filter(Boolean);
  if (!p.edit) {
    return (
      <div>
        <h3 class="spam-kind">{KIND_LABEL[p.kind]}</h3>
        {entries.length ? (
          <ul class="mono">
            {entries.map((e) => (
              <li>{e}</li>
            ))}
          </ul>
        ) : (
          <p class="muted">none</p>
        )}
      </div>
    );
  }
  return (
    <div>
      <label for={id}>{KIND_LABEL[p.kind]}</label>
      <p class="help" id={`${id}-help`}>
        {KIND_HELP[p.kind]} One per line.
      </p>
      <textarea
        id={id}
        name={`${p.list}_${p.kind}`}
        rows={4}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-help ${id}-error` : `${id}-help`}
      >
        {p.value}
      </textarea>
      <FieldMessage id={`${id}-error`} message={error} />
    </div>
  );
};

/** The organization's block and allow lists: a form for an owner or admin, read-only for a member. */
export const ListsCard: FC<{
  c: Context<DashEnv>;
  values: ListValues;
  edit: boolean;
  error?: { message: string; hint?: string; issues: Issue[] };
}> = ({ c, values, edit, error }) => {
  const issues = error?.issues ?? [];
  const body = LISTS.map((l) => (
    <fieldset class="spam-list">
      <legend>{LIST_ABOUT[l].title}</legend>
      <p class="muted">{LIST_ABOUT[l].about}</p>
      <div class="spam-kinds">
        {KINDS.map((k) => (
          <ListField list={l} kind={k} value={values[`${l}_${k}`]} issues={issues} edit={edit} />
        ))}
      </div>
    </fieldset>
  ));
  return (
    <section class="card" aria-labelledby="lists-h">
      <h2 id="lists-h">Block and allow lists</h2>
      <p class="muted">They apply to every form of the organization, with each form's own lists.</p>
      {edit ? (
        <form method="post" action="/app/spam/lists">
          <CsrfField c={c} />
          {error ? <ErrorBox message={error.message} hint={error.hint} /> : null}
          {body}
          <button type="submit">Save lists</button>
        </form>
      ) : (
        <>
          {body}
          <p class="muted">Only an owner or admin can change the lists.</p>
        </>
      )}
    </section>
  );
};

type Token = Filter['model']['spam_tokens'][number];

const TokenTable: FC<{ caption: string; tokens: Token[] }> = ({ caption, tokens }) =>
  tokens.length ? (
    <Table cols={['Token', 'In spam', 'In not spam', 'Spam probability']} caption={caption}>
      {tokens.map((t) => (
        <tr>
          <td class="mono">{t.token}</td>
          <td>{t.spam}</td>
          <td>{t.ham}</td>
          <td>{t.probability.toFixed(2)}</td>
        </tr>
      ))}
    </Table>
  ) : (
    <p class="muted">{`${caption}: none yet.`}</p>
  );

/** What the learning filter knows: marks per verdict, the strongest tokens each way, and Forget. */
export const ModelCard: FC<{ model: Filter['model']; manager: boolean }> = ({ model, manager }) => (
  <section class="card" aria-labelledby="model-h">
    <h2 id="model-h">What the filter learned</h2>
    <dl class="meta">
      <dt>marked spam</dt>
      <dd id="spam-learned">{model.spam}</dd>
      <dt>marked not spam</dt>
      <dd id="ham-learned">{model.ham}</dd>
    </dl>
    {model.spam + model.ham === 0 ? (
      <p class="muted">
        Nothing yet: it learns each time someone presses Mark as spam or Not spam on a submission, and says nothing
        until then.
      </p>
    ) : (
      <div class="spam-tokens">
        <TokenTable caption="Words that weigh towards spam" tokens={model.spam_tokens} />
        <TokenTable caption="Words that weigh towards not spam" tokens={model.ham_tokens} />
      </div>
    )}
    {manager ? (
      <p>
        <a class="button secondary" href="/app/spam/forget">
          Forget what it learned…
        </a>
      </p>
    ) : (
      <p class="muted">Only an owner or admin can make the filter forget what it learned.</p>
    )}
  </section>
);

/** The latest marks, each linking to its submission (gone ones say so). */
export const MarksCard: FC<{ marks: Filter['recent_marks']; forms: Map<string, string> }> = ({ marks, forms }) => (
  <section class="card" aria-labelledby="marks-h">
    <h2 id="marks-h">Recent marks</h2>
    {marks.length ? (
      <Table cols={['Marked', 'Submission', 'Form', 'Taught', 'Status now']}>
        {marks.map((m) => (
          <tr>
            <td>
              <Time at={m.marked_at} />
            </td>
            <td>
              {m.status ? (
                <a href={`/app/submissions/${encodeURIComponent(m.submission_id)}`}>{m.submission_id}</a>
              ) : (
                <span class="muted">{`${m.submission_id} (deleted)`}</span>
              )}
            </td>
            <td>{m.form_id ? (forms.get(m.form_id) ?? m.form_id) : '—'}</td>
            <td>{m.mark === 'spam' ? 'spam' : 'not spam'}</td>
            <td>{m.status ? <Badge value={m.status} /> : '—'}</td>
          </tr>
        ))}
      </Table>
    ) : (
      <p class="muted">No marks yet. Open a submission from the inbox and press Mark as spam or Not spam.</p>
    )}
  </section>
);
