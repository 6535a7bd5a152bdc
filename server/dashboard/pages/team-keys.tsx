import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { KEY_SCOPES } from '../../../shared/contracts/auth.js';
import { keyOps } from '../../../shared/contracts/keys.js';
import { ApiError } from '../../core/errors.js';
import { pageOf } from '../../core/pagination.js';
import { createKey, listKeys, revokeKey } from '../../services/keys.js';
import { manages } from '../../services/members.js';
import { FieldMessage, Table } from '../components.js';
import type { DashEnv } from '../env.js';
import { allow, bodyFor, issuesOf, queryFor } from '../input.js';
import { Copyable, CsrfField, done, Empty, ErrorBox, Pager, PostForm, page, Time } from '../render.js';
import { ConnectedApps } from './oauth.js';
import { all, can, fieldsOf, formHint, issueAt, one } from './org-common.js';

const SCOPE_HELP: Record<(typeof KEY_SCOPES)[number], string> = {
  submit: 'submit: post submissions only',
  read: 'read: also read forms, submissions and deliveries',
  manage: 'manage: everything an API key can do',
};

type KeyValues = { name: string; scopes: string[] };

/** The create form, with the values kept and errors next to their fields after a refusal. */
const KeyForm: FC<{ c: Context<DashEnv>; form: { values: KeyValues; error?: ApiError } }> = ({ c, form }) => {
  const issues = issuesOf(form.error);
  const nameError = issueAt(issues, 'name');
  const scopesRaw = issueAt(issues, 'scopes');
  const scopesError = /too small/i.test(scopesRaw) ? 'Tick at least one scope.' : scopesRaw;
  return (
    <form method="post" action="/app/keys" class="card" aria-labelledby="newkey-h">
      <h2 id="newkey-h">Create a key</h2>
      <CsrfField c={c} />
      {form.error ? <ErrorBox message={form.error.message} hint={formHint(form.error)} /> : null}
      <label for="key-name">Name (up to 32 characters)</label>
      <input
        id="key-name"
        name="name"
        type="text"
        required
        maxlength={32}
        value={form.values.name}
        placeholder="ci"
        aria-invalid={nameError ? 'true' : undefined}
      />
      <FieldMessage message={nameError} />
      <fieldset>
        <legend>Scopes</legend>
        {KEY_SCOPES.map((s) => (
          <label class="check">
            <input type="checkbox" name="scopes" value={s} checked={form.values.scopes.includes(s)} /> {SCOPE_HELP[s]}
          </label>
        ))}
        <FieldMessage message={scopesError} />
      </fieldset>
      <p>
        <button type="submit">Create key</button>
      </p>
    </form>
  );
};

async function keysPage(
  c: Context<DashEnv>,
  form: { values: KeyValues; error?: ApiError } = { values: { name: '', scopes: ['read'] } },
) {
  allow(c, keyOps.list);
  const q = queryFor(keyOps.list, c.req.query());
  const list = await listKeys(c.var.deps, c.var.actor, pageOf(q, 'apiKey'));
  // Revoking takes what minting takes: an owner or admin (the service refuses a member).
  const mayRevoke = can(c, keyOps.revoke) && manages(c.var.actor);
  return page(
    c,
    { title: 'API keys', section: 'team', status: form.error ? 422 : 200 },
    <>
      <p>
        <a href="/app/team">← Team</a>
      </p>
      <h1>API keys</h1>
      <p class="muted">
        Keys let CI, scripts and agents call the API and the CLI (<code>FORMSVC_API_KEY</code>). A key's secret is shown
        once, when it is made.
      </p>
      {list.data.length === 0 ? (
        <Empty title="No API keys">
          <p>Create one below for your CI or an agent, with only the scopes it needs.</p>
        </Empty>
      ) : (
        <Table cols={['Name', 'Key', 'Scopes', 'Created', 'Last used', mayRevoke && 'Revoke']}>
          {list.data.map((k) => (
            <tr>
              <td>{k.name}</td>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{k.scopes.join(', ')}</td>
              <td>
                <Time at={k.created_at} />
                {k.created_by ? <span class="muted"> by {k.created_by.email}</span> : null}
              </td>
              <td>
                <Time at={k.last_used_at} />
              </td>
              {mayRevoke ? (
                <td>
                  <PostForm
                    c={c}
                    action={`/app/keys/${encodeURIComponent(k.id)}/revoke`}
                    confirm={`Revoke the key "${k.name}"? Everything using it stops working at once.`}
                  >
                    <button type="submit" class="danger" aria-label={`Revoke the key ${k.name}`}>
                      Revoke
                    </button>
                  </PostForm>
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
      <Pager
        href={list.next_cursor ? `/app/keys?cursor=${encodeURIComponent(list.next_cursor)}` : null}
        label="Older keys"
      />
      <ConnectedApps c={c} />
      {can(c, keyOps.create) ? (
        <KeyForm c={c} form={form} />
      ) : (
        <p class="muted">Only an owner or admin can create keys.</p>
      )}
    </>,
  );
}

export function registerKeyPages(dash: Hono<DashEnv>): void {
  dash.get('/keys', (c) => keysPage(c));

  dash.post('/keys', async (c) => {
    allow(c, keyOps.create);
    const f = await fieldsOf(c);
    const values = { name: one(f, 'name').trim(), scopes: all(f, 'scopes') };
    let key: Awaited<ReturnType<typeof createKey>>;
    try {
      // No scope ticked is refused (the API's default would be manage, which a person should choose on purpose).
      key = await createKey(c.var.deps, c.var.actor, bodyFor(keyOps.create, values));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'validation_failed') return keysPage(c, { values, error: err });
      throw err;
    }
    // The secret is on this answer only; the list shows the prefix, and nothing shows the secret again.
    return page(
      c,
      { title: 'Key created', section: 'team' },
      <>
        <h1>Key “{key.name}” created</h1>
        <section class="card" aria-labelledby="secret-h">
          <h2 id="secret-h">The key</h2>
          <p>
            <strong>Copy it now: it is shown only this once.</strong> Scopes: {key.scopes.join(', ')}.
          </p>
          <Copyable id="new-api-key" text={key.api_key} label="key" />
          <p class="muted">
            Use it with the CLI as <code>FORMSVC_API_KEY=…</code> (or <code>--api-key</code>), or send it as{' '}
            <code>Authorization: Bearer …</code>.
          </p>
        </section>
        <p>
          <a class="button" href="/app/keys">
            Back to the keys
          </a>
        </p>
      </>,
    );
  });

  dash.post('/keys/:id/revoke', async (c) => {
    allow(c, keyOps.revoke);
    await revokeKey(c.var.deps, c.var.actor, c.req.param('id'));
    return done(c, '/app/keys', 'Key revoked.');
  });
}
