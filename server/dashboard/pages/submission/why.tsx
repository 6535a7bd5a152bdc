import type { FC } from 'hono/jsx';
import type { ExplanationOut } from '../../../present/explain.js';
import { Table } from '../../components.js';
import { Badge, Time } from '../../render.js';

/**
 * "Why": the submission's explanation (GET /v1/submissions/{id}/explain) as a panel: the summary,
 * each intake check, each route considered, and each delivery's attempts. Text only (JSX escapes
 * every value); no script.
 */
export const WhyCard: FC<{ e: ExplanationOut }> = ({ e }) => (
  <section class="card" id="why">
    <h2>Why</h2>
    <p class="why-summary">
      <Badge value={e.outcome} /> <span>{e.summary}</span>
    </p>
    <h3>Intake checks</h3>
    <Table cols={['Check', 'Verdict', 'Reason']}>
      {e.checks.map((c) => (
        <tr>
          <td>{c.check.replace(/_/g, ' ')}</td>
          <td>
            <Badge value={c.verdict} />
          </td>
          <td>{c.reason}</td>
        </tr>
      ))}
    </Table>
    <h3>Routes</h3>
    {e.routes.length ? (
      <Table cols={['Route', 'Via', 'Destination', 'Reason', 'Detail']}>
        {e.routes.map((r) => (
          <tr>
            <td>
              <code>{r.route_id}</code>
            </td>
            <td>{r.via === 'stream' ? `stream ${r.stream_id ?? ''}` : r.via}</td>
            <td>{r.destination_name ?? r.destination_id}</td>
            <td>
              <Badge value={r.reason} />
            </td>
            <td>{r.detail}</td>
          </tr>
        ))}
      </Table>
    ) : (
      <p class="muted">No route: the form and its streams have none.</p>
    )}
    {e.deliveries.map((d) => (
      <>
        <h3>
          {`Delivery to ${d.destination_name ?? d.destination_id} `}
          <Badge value={d.state} />
        </h3>
        <p>{d.why}</p>
        {d.attempts.length ? (
          <Table cols={['#', 'Started', 'Status code', 'Latency', 'Outcome', 'Error', 'Next attempt']}>
            {d.attempts.map((a) => (
              <tr>
                <td>{String(a.n)}</td>
                <td>
                  <Time at={a.started_at} />
                </td>
                <td>{a.status_code === null ? '—' : String(a.status_code)}</td>
                <td>{`${a.latency_ms} ms`}</td>
                <td>
                  <Badge value={a.outcome} />
                </td>
                <td>{a.error ?? ''}</td>
                <td>
                  <Time at={a.next_attempt_at} />
                </td>
              </tr>
            ))}
          </Table>
        ) : (
          <p class="muted">No attempt recorded.</p>
        )}
      </>
    ))}
  </section>
);
