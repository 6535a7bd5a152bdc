import type { FC } from 'hono/jsx';
import type { DailyChart, DayCounts } from '../services/charts.js';

/**
 * The 30-day chart of the Forms page and of each form's page: submissions per day stacked by
 * outcome (received, quarantined, spam) and a line for the share of the day's deliveries sent.
 * Drawn on the server as SVG: no script, and no style attribute (the CSP has no 'unsafe-inline'),
 * so colours are SVG presentation attributes and sizes come from the stylesheet (forms.assets.ts).
 * For screen readers the SVG is one image with a title and a summary; the numbers of every day are
 * in the table beside it.
 */

/** Geometry of the drawing, in SVG user units (the stylesheet scales it to the card's width). */
const SLOT = 22;
const BAR = 15;
const LEFT = 40;
const RIGHT = 44;
const TOP = 12;
const PLOT = 120;
const BOTTOM = 24;

/** Outcomes bottom to top, with the colour of each (the legend's swatches use the same classes). */
const OUTCOMES = [
  { key: 'received', label: 'Received', fill: '#3b4cca' },
  { key: 'quarantined', label: 'Quarantined', fill: '#d08a00' },
  { key: 'spam', label: 'Spam', fill: '#c23b3b' },
] as const;
const SENT_STROKE = '#17663a';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "Nov 3" of a YYYY-MM-DD day. */
const short = (day: string) => `${MONTHS[Number(day.slice(5, 7)) - 1]} ${Number(day.slice(8, 10))}`;

const totalOf = (d: Omit<DayCounts, 'day'>) => d.received + d.quarantined + d.spam;
/** "83%", or "–" when there was nothing to send. */
const share = (d: Omit<DayCounts, 'day'>) => (d.deliveries ? `${Math.round((100 * d.sent) / d.deliveries)}%` : '–');

/** The smallest of 1, 2, 5 × 10ⁿ at or above `n` (at least 4): the top of the scale. */
function niceMax(n: number) {
  let step = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (m * step >= Math.max(n, 4)) return m * step;
    step *= 10;
  }
}

/** One day's stacked bar, with a tooltip (an SVG <title>) of its numbers. */
const Bar: FC<{ d: DayCounts; i: number; max: number }> = ({ d, i, max }) => {
  let y = TOP + PLOT;
  const x = LEFT + i * SLOT + (SLOT - BAR) / 2;
  return (
    <g>
      <title>{`${d.day}: ${d.received} received, ${d.quarantined} quarantined, ${d.spam} spam; ${share(d)} of ${d.deliveries} deliveries sent`}</title>
      {OUTCOMES.map((o) => {
        const h = (d[o.key] / max) * PLOT;
        y -= h;
        return h > 0 ? (
          <rect class={`chart-${o.key}`} x={x} y={y.toFixed(1)} width={BAR} height={h.toFixed(1)} fill={o.fill} />
        ) : null;
      })}
    </g>
  );
};

/**
 * The share of deliveries sent, per day that had any: a line on the right-hand 0–100 % scale, broken
 * where a day had none (a line across it would claim a share for that day).
 */
const SentLine: FC<{ days: DayCounts[] }> = ({ days }) => {
  const runs: { x: number; y: number }[][] = [[]];
  for (const [i, d] of days.entries()) {
    const run = runs[runs.length - 1];
    if (d.deliveries) run.push({ x: LEFT + i * SLOT + SLOT / 2, y: TOP + PLOT - (d.sent / d.deliveries) * PLOT });
    else if (run.length) runs.push([]);
  }
  const points = runs.flat();
  if (!points.length) return null;
  const xy = (p: { x: number; y: number }) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`;
  return (
    <g class="chart-sent" fill="none" stroke={SENT_STROKE} stroke-width="2">
      {runs.map((run) => (run.length > 1 ? <polyline points={run.map(xy).join(' ')} /> : null))}
      {points.map((p) => (
        <circle cx={p.x.toFixed(1)} cy={p.y.toFixed(1)} r="2.5" fill={SENT_STROKE} stroke="none" />
      ))}
    </g>
  );
};

/** Grid lines with the count scale on the left and the share scale on the right; a date every week. */
const Axes: FC<{ days: DayCounts[]; max: number }> = ({ days, max }) => {
  const right = LEFT + days.length * SLOT;
  return (
    <g class="chart-axis" fill="#5d6169" font-size="10">
      {[0, 0.5, 1].map((f) => {
        const y = TOP + PLOT - f * PLOT;
        return (
          <>
            <line x1={LEFT} x2={right} y1={y} y2={y} stroke="#dcdde1" stroke-width="1" />
            <text x={LEFT - 6} y={y + 3} text-anchor="end">
              {String(max * f)}
            </text>
            <text x={right + 6} y={y + 3}>{`${f * 100}%`}</text>
          </>
        );
      })}
      {days.map((d, i) =>
        (days.length - 1 - i) % 7 === 0 ? (
          <text x={LEFT + i * SLOT + SLOT / 2} y={TOP + PLOT + 16} text-anchor="middle">
            {short(d.day)}
          </text>
        ) : null,
      )}
    </g>
  );
};

/** The numbers of the chart, one row per day, newest first. */
const DayTable: FC<{ chart: DailyChart; caption: string }> = ({ chart, caption }) => (
  <div class="table-wrap">
    <table class="chart-table">
      <caption class="muted">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Day (UTC)</th>
          <th scope="col">Received</th>
          <th scope="col">Quarantined</th>
          <th scope="col">Spam</th>
          <th scope="col">Deliveries</th>
          <th scope="col">Sent</th>
        </tr>
      </thead>
      <tbody>
        {[...chart.days].reverse().map((d) => (
          <tr>
            <th scope="row">{d.day}</th>
            <td>{d.received}</td>
            <td>{d.quarantined}</td>
            <td>{d.spam}</td>
            <td>{d.deliveries}</td>
            <td>{`${d.sent} (${share(d)})`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

/**
 * The chart in a card: `id` makes its element ids unique on the page, `subject` says whose
 * submissions they are ("all forms", a form's name: escaped like any JSX text).
 */
export const DailyChartCard: FC<{ id: string; subject: string; chart: DailyChart }> = ({ id, subject, chart }) => {
  const { days, totals } = chart;
  const max = niceMax(Math.max(0, ...days.map(totalOf)));
  const title = `Submissions per day, last ${days.length} days: ${subject}`;
  const summary = `${totalOf(totals)} submissions: ${totals.received} received, ${totals.quarantined} quarantined, ${totals.spam} spam; ${share(totals)} of ${totals.deliveries} deliveries sent. The numbers of each day are in the table below the chart.`;
  return (
    <section class="card chart" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Last {days.length} days</h2>
      <svg
        class="chart-svg"
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        viewBox={`0 0 ${LEFT + days.length * SLOT + RIGHT} ${TOP + PLOT + BOTTOM}`}
        xmlns="http://www.w3.org/2000/svg"
      >
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>{summary}</desc>
        <Axes days={days} max={max} />
        {days.map((d, i) => (
          <Bar d={d} i={i} max={max} />
        ))}
        <SentLine days={days} />
      </svg>
      <p class="chart-legend">
        {OUTCOMES.map((o) => (
          <span class={`chart-key chart-key-${o.key}`}>{o.label}</span>
        ))}
        <span class="chart-key chart-key-sent">Deliveries sent (share, right scale)</span>
      </p>
      <p class="muted">{summary.slice(0, summary.indexOf(' The numbers'))}</p>
      <details>
        <summary>Numbers per day</summary>
        <DayTable chart={chart} caption={`${title}. Days are UTC days; today is still counting.`} />
      </details>
    </section>
  );
};
