import type { Context } from 'hono';
import type { Child, FC } from 'hono/jsx';
import type { z } from '../../shared/contracts/common.js';
import type { Delivery } from '../../shared/contracts/deliveries.js';
import type { DashEnv } from './env.js';
import { Badge, PostForm, Time } from './render.js';

/**
 * A list as a table: one header cell per column (a falsy entry is a column the viewer does not get),
 * then an `action` column whose heading is muted (its cells hold buttons), and the rows as children.
 * `body` goes onto the tbody, for the live list that app.js refreshes in place.
 */
export const Table: FC<{
  cols: Array<string | false | null | undefined>;
  action?: string;
  caption?: Child;
  body?: { id: string; 'data-poll'?: string; 'data-poll-ms'?: string };
  children?: Child;
}> = ({ cols, action, caption, body, children }) => (
  <div class="table-wrap">
    <table>
      {caption ? <caption class="muted">{caption}</caption> : null}
      <thead>
        <tr>
          {cols.map((col) => (col ? <th scope="col">{col}</th> : null))}
          {action ? (
            <th scope="col">
              <span class="muted">{action}</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody {...body}>{children}</tbody>
    </table>
  </div>
);

/** A list's filter bar: a GET form back to the list, its fields, the Filter button, then `after` (e.g. a Clear link). */
export const FilterBar: FC<{ action: string; label?: string; after?: Child; children?: Child }> = (p) => (
  <form method="get" action={p.action} class="filters" aria-label={p.label}>
    {p.children}
    <button type="submit" class="secondary">
      Filter
    </button>
    {p.after}
  </form>
);

/**
 * A field's error right under it: one message, or the messages of several issues joined. `id` is what the
 * control's aria-describedby names.
 */
export const FieldMessage: FC<{ id?: string; message: string | Array<{ message: string }> | null | undefined }> = ({
  id,
  message,
}) => {
  const text = Array.isArray(message) ? message.map((m) => m.message).join('; ') : message;
  return text ? (
    <p class="field-error" id={id}>
      {text}
    </p>
  ) : null;
};

/** Plain values as the choices of a select (each shown as itself). */
export const named = (values: readonly string[]) => values.map((v) => ({ id: v, name: v }));

type DeliveryRow = z.output<typeof Delivery>;

/** Statuses a single Retry accepts (the service answers 409 for the others). */
const RETRYABLE = new Set(['dead', 'failed', 'sent']);

/** A payload's form id (payload.form is {id, slug} for form deliveries). */
export function formIdOf(form: unknown): string | undefined {
  if (typeof form === 'string') return form;
  if (form && typeof form === 'object' && typeof (form as { id?: unknown }).id === 'string') {
    return (form as { id: string }).id;
  }
  return undefined;
}

/** A delivery's status, why it was skipped, and when it was sent or is tried next. */
const DeliveryStatus: FC<{ d: DeliveryRow }> = ({ d }) => (
  <>
    <Badge value={d.status} />
    {d.skip_reason ? <span class="muted">{` (${d.skip_reason})`}</span> : null}
    {d.sent_at ? (
      <div class="muted">
        {'sent '}
        <Time at={d.sent_at} />
      </div>
    ) : d.next_attempt_at && d.status !== 'dead' ? (
      <div class="muted">
        {'next try '}
        <Time at={d.next_attempt_at} />
      </div>
    ) : null}
  </>
);

/**
 * What the destination answered last: the status and time, the error, and the body's excerpt: its
 * start in the log's many rows, the whole excerpt on a submission's page.
 */
const DeliveryResponse: FC<{ d: DeliveryRow; whole: boolean }> = ({ d, whole }) => {
  const r = d.last_response;
  const error = r?.error ?? d.last_error;
  return (
    <>
      {r ? (
        <span>
          {r.status_code !== null ? `HTTP ${r.status_code}` : r.ok ? 'ok' : 'no answer'}
          {` in ${r.latency_ms} ms`}
        </span>
      ) : null}
      {error ? <div class="field-error">{error.slice(0, 300)}</div> : null}
      {r?.response_excerpt ? (
        whole ? (
          <pre>{r.response_excerpt}</pre>
        ) : (
          <div class="mono muted">{r.response_excerpt.slice(0, 200)}</div>
        )
      ) : null}
      {!r && !error ? <span class="muted">not attempted yet</span> : null}
    </>
  );
};

/** The submission a delivery carries ("digest" for a digest) and its form's name. */
const DeliverySubmission: FC<{ d: DeliveryRow; forms?: Map<string, string> }> = ({ d, forms }) => {
  const formId = formIdOf(d.payload?.form);
  return (
    <>
      {d.submission_id ? (
        <a href={`/app/submissions/${d.submission_id}`}>{d.submission_id}</a>
      ) : (
        <span class="muted">digest</span>
      )}
      {formId ? <div class="muted">{forms?.get(formId) ?? formId}</div> : null}
    </>
  );
};

/** The columns of a submission's deliveries; the log adds when each was created and what it carries. */
const DELIVERY_COLUMNS = ['Destination', 'Status', 'Attempts', 'Last response'] as const;
const LOG_COLUMNS = ['Created', 'Status', 'Destination', 'Submission', 'Attempts', 'Last response'] as const;
type DeliveryColumn = (typeof LOG_COLUMNS)[number];

/**
 * Deliveries with their state, last answer and a Retry button, for a submission's page and the delivery log.
 * `log` gives the log's columns, the forms' names for them and the address a Retry returns to;
 * `retry` is where a delivery's Retry posts.
 */
export const DeliveryTable: FC<{
  c: Context<DashEnv>;
  items: DeliveryRow[];
  destinations: Map<string, string>;
  retry: (d: DeliveryRow) => string;
  log?: { forms: Map<string, string>; back: string };
}> = ({ c, items, destinations, retry, log }) => {
  const cells: Record<DeliveryColumn, (d: DeliveryRow) => Child> = {
    Created: (d) => <Time at={d.created_at} />,
    Status: (d) => <DeliveryStatus d={d} />,
    Destination: (d) => (
      <a href={`/app/destinations/${encodeURIComponent(d.destination_id)}`}>
        {destinations.get(d.destination_id) ?? d.destination_id}
      </a>
    ),
    Submission: (d) => <DeliverySubmission d={d} forms={log?.forms} />,
    Attempts: (d) => d.attempts,
    'Last response': (d) => <DeliveryResponse d={d} whole={!log} />,
  };
  const columns = log ? LOG_COLUMNS : DELIVERY_COLUMNS;
  return (
    <Table cols={[...columns]} action="Actions">
      {items.map((d) => (
        <tr id={`delivery-${d.id}`}>
          {columns.map((col) => (
            <td>{cells[col](d)}</td>
          ))}
          <td>
            {RETRYABLE.has(d.status) ? (
              <PostForm c={c} action={retry(d)}>
                {log ? <input type="hidden" name="back" value={log.back} /> : null}
                <button type="submit" class="secondary" aria-label={`Retry delivery ${d.id}`}>
                  Retry
                </button>
              </PostForm>
            ) : null}
          </td>
        </tr>
      ))}
    </Table>
  );
};
