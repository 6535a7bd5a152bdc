import type { Context } from 'hono';
import { html } from 'hono/html';
import type { Child, FC } from 'hono/jsx';
import type { DashEnv } from './env.js';

/** The main sections, in the order of the navigation bar. */
export const NAV = [
  { href: '/app', label: 'Inbox', key: 'inbox' },
  { href: '/app/forms', label: 'Forms', key: 'forms' },
  { href: '/app/destinations', label: 'Destinations', key: 'destinations' },
  { href: '/app/deliveries', label: 'Deliveries', key: 'deliveries' },
  { href: '/app/streams', label: 'Streams', key: 'streams' },
  { href: '/app/events', label: 'Events', key: 'events' },
  { href: '/app/spam', label: 'Spam', key: 'spam' },
  { href: '/app/team', label: 'Team & keys', key: 'team' },
] as const;
export type Section = (typeof NAV)[number]['key'];

export interface PageOptions {
  title: string;
  /** Which navigation entry is current (none on signed-out pages). */
  section?: Section;
  /** A one-line message from the action that led here (`?notice=` after a redirect). */
  notice?: string;
  status?: 200 | 400 | 403 | 404 | 409 | 422 | 429;
}

/** The page frame: header with navigation and the organization switcher, then the page's content. */
const Frame: FC<{ c: Context<DashEnv>; opts: PageOptions; children?: Child }> = ({ c, opts, children }) => {
  const actor = c.var.actor;
  const notice = opts.notice ?? c.req.query('notice');
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{`${opts.title} · formsvc`}</title>
        <link rel="stylesheet" href="/app/assets/app.css" />
        <script src="/app/assets/app.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/app">
            formsvc
          </a>
          {actor ? (
            <nav aria-label="Main">
              <ul>
                {NAV.map((n) => (
                  <li>
                    <a href={n.href} aria-current={n.key === opts.section ? 'page' : undefined}>
                      {n.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          ) : null}
          {actor ? (
            <form method="post" action="/app/sign-out" class="signout">
              <CsrfField c={c} />
              <span class="who">{c.var.email ?? ''}</span>
              <button type="submit" class="link">
                Sign out
              </button>
            </form>
          ) : null}
        </header>
        <main id="main">
          {actor && c.var.approvalsPending ? (
            <p class="banner" role="status" id="approval-banner">
              <a href="/app/approvals">
                {c.var.approvalsPending === 1
                  ? '1 new destination waits for your approval'
                  : `${c.var.approvalsPending} new destinations wait for your approval`}
              </a>
              : an API key pointed data somewhere new; nothing is sent there until an owner or admin approves.
            </p>
          ) : null}
          {notice ? (
            <p class="notice" role="status">
              {notice}
            </p>
          ) : null}
          {children}
        </main>
      </body>
    </html>
  );
};

/** Answers with a whole page. Every value in `body` is escaped by JSX; nothing is inserted raw. */
export function page(c: Context<DashEnv>, opts: PageOptions, body: Child) {
  const frame = (
    <Frame c={c} opts={opts}>
      {body}
    </Frame>
  );
  return c.html(html`<!DOCTYPE html>${frame}`, opts.status ?? 200);
}

/** The hidden CSRF field every state-changing form holds. */
export const CsrfField: FC<{ c: Context<DashEnv> }> = ({ c }) => (
  <input type="hidden" name="_csrf" value={c.var.csrf} />
);

/** A POST form with its CSRF field (for buttons such as Retry, Revoke, Mark spam). */
export const PostForm: FC<{
  c: Context<DashEnv>;
  action: string;
  class?: string;
  confirm?: string;
  children?: Child;
}> = ({ c, action, class: cls, confirm, children }) => (
  <form method="post" action={action} class={cls} data-confirm={confirm}>
    <CsrfField c={c} />
    {children}
  </form>
);

/** A time shown relative to now ("3 min ago"; app.js keeps it current), the exact time on hover. */
export const Time: FC<{ at: string | Date | null | undefined }> = ({ at }) => {
  if (!at) return <span class="muted">—</span>;
  const d = typeof at === 'string' ? new Date(at) : at;
  const iso = d.toISOString();
  return (
    <time datetime={iso} title={iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')} data-rel="">
      {relative(d, new Date())}
    </time>
  );
};

/** "just now", "5 min ago", "3 h ago", "2 d ago", else the date. */
export function relative(d: Date, now: Date): string {
  const s = Math.round((now.getTime() - d.getTime()) / 1000);
  if (s < 45 && s > -45) return 'just now';
  if (s < 0) return d.toISOString().slice(0, 16).replace('T', ' ');
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  if (s < 30 * 86_400) return `${Math.round(s / 86_400)} d ago`;
  return d.toISOString().slice(0, 10);
}

/** What an empty list shows: what it is, and what to do next. */
export const Empty: FC<{ title: string; children?: Child }> = ({ title, children }) => (
  <section class="empty">
    <h2>{title}</h2>
    {children}
  </section>
);

/** A status word as a coloured badge (received, spam, quarantined, sent, dead, failing…). */
export const Badge: FC<{ value: string }> = ({ value }) => (
  <span class={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value}</span>
);

/** Text with a Copy button (embed snippets, new API keys, signing secrets). */
export const Copyable: FC<{ id: string; text: string; label: string; multiline?: boolean }> = ({
  id,
  text,
  label,
  multiline,
}) => (
  <div class="copyable">
    {multiline ? (
      <pre id={id} tabindex={0}>
        {text}
      </pre>
    ) : (
      <code id={id}>{text}</code>
    )}
    <button type="button" class="copy" data-copy={id}>
      {`Copy ${label}`}
    </button>
  </div>
);

/** An error's message and hint under a form or at the top of a page. */
export const ErrorBox: FC<{ message: string; hint?: string; fields?: Array<{ path: string; message: string }> }> = ({
  message,
  hint,
  fields,
}) => (
  <div class="error" role="alert">
    <p>{message}</p>
    {fields?.length ? (
      <ul>
        {fields.map((f) => (
          <li>
            <code>{f.path || '(body)'}</code>: {f.message}
          </li>
        ))}
      </ul>
    ) : null}
    {hint ? <p class="hint">{hint}</p> : null}
  </div>
);

/** Redirects after a successful POST (303, so a reload does not repeat it), with a one-line notice. */
export function done(c: Context<DashEnv>, to: string, notice?: string) {
  const url = notice ? `${to}${to.includes('?') ? '&' : '?'}notice=${encodeURIComponent(notice)}` : to;
  return c.redirect(url, 303);
}

/** The link to a list's next page (older rows), when there is one. */
export const Pager: FC<{ href: string | null; label: string }> = ({ href, label }) =>
  href ? (
    <nav class="pager" aria-label="Pages">
      <a href={href}>{label}</a>
    </nav>
  ) : null;
