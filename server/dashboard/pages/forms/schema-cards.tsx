import type { Context } from 'hono';
import type { FC } from 'hono/jsx';
import type { listSchemaVersions } from '../../../services/schemas.js';
import { Table } from '../../components.js';
import type { DashEnv } from '../../env.js';
import { Badge, Empty, ErrorBox, PostForm, Time } from '../../render.js';
import type { Failure } from '../forms-ui.js';

/** Infer a draft schema from the newest submissions (it fills the editor; nothing is published). */
export const InferCard: FC<{ c: Context<DashEnv>; base: string; failure?: Failure }> = ({ c, base, failure }) => (
  <section class="card" aria-labelledby="infer">
    <h2 id="infer">Infer a draft from traffic</h2>
    <p class="muted">
      Reads the newest received submissions (up to 200) and fills the editor above with a draft. Nothing is published
      until you press Publish.
    </p>
    {failure ? <ErrorBox message={failure.message} hint={failure.hint} /> : null}
    <PostForm c={c} action={`${base}/infer`}>
      <label for="inf-test">
        <input id="inf-test" name="include_test" type="checkbox" /> Also read test submissions
      </label>
      <p>
        <button type="submit" class="secondary">
          Infer a draft
        </button>
      </p>
    </PostForm>
  </section>
);

/** The published versions, newest first, each viewable with its UI hints. */
export const VersionsCard: FC<{
  versions: Awaited<ReturnType<typeof listSchemaVersions>>;
  current: number | null;
  base: string;
}> = ({ versions, current, base }) => (
  <section aria-labelledby="versions">
    <h2 id="versions">Versions</h2>
    {versions.data.length ? (
      <Table cols={['Version', 'Changelog', 'Published', 'Schema']}>
        {versions.data.map((v) => (
          <tr>
            <td>
              {`v${v.version}`} {v.version === current ? <Badge value="current" /> : null}{' '}
              {v.inferred ? <Badge value="inferred" /> : null}
            </td>
            <td>{v.changelog || <span class="muted">—</span>}</td>
            <td>
              <Time at={v.created_at} /> <span class="muted mono">{v.created_by}</span>
            </td>
            <td>
              <details>
                <summary>{`View version ${v.version}`}</summary>
                <p class="muted">JSON Schema</p>
                <pre tabindex={0}>{JSON.stringify(v.json_schema, null, 2)}</pre>
                {Object.keys(v.ui).length ? (
                  <>
                    <p class="muted">UI hints</p>
                    <pre tabindex={0}>{JSON.stringify(v.ui, null, 2)}</pre>
                  </>
                ) : null}
              </details>
            </td>
          </tr>
        ))}
      </Table>
    ) : (
      <Empty title="No version yet">
        <p>Write a schema in the editor above and publish it, or infer a draft from the submissions so far.</p>
      </Empty>
    )}
    {versions.next_cursor ? (
      <p class="pager">
        <a href={`${base}?cursor=${encodeURIComponent(versions.next_cursor)}#versions`}>Older versions</a>
      </p>
    ) : null}
  </section>
);
