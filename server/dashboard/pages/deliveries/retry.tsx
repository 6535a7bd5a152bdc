import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { DashEnv } from '../../env.js';
import { CsrfField, ErrorBox } from '../../render.js';
import { qs } from '../routing-ui.js';
import type { Filters, Replay } from './filters.js';

/** The confirmation of a bulk retry (works without JavaScript): what will be retried, and a button. */
export const RetryConfirm: FC<{ c: Context<DashEnv>; f: Filters; replay: Replay; described: string }> = ({
  c,
  f,
  replay,
  described,
}) => (
  <>
    <p>
      <a href={`/app/deliveries${qs(f)}`}>← Deliveries</a>
    </p>
    <h1>Retry all that match</h1>
    {'body' in replay ? (
      <>
        <p>
          Every delivery with {described} will be queued again now, with a fresh attempt budget and the same payload and
          delivery id.
        </p>
        <form method="post" action="/app/deliveries/retry" class="row">
          <CsrfField c={c} />
          {f.status ? <input type="hidden" name="status" value={f.status} /> : null}
          {f.destination_id ? <input type="hidden" name="destination_id" value={f.destination_id} /> : null}
          {f.form_id ? <input type="hidden" name="form_id" value={f.form_id} /> : null}
          <button type="submit">Yes, retry them all</button>
          <a class="button secondary" href={`/app/deliveries${qs(f)}`}>
            Cancel
          </a>
        </form>
      </>
    ) : (
      <ErrorBox message={replay.why} hint="Go back to the delivery log and choose filters." />
    )}
  </>
);
