/**
 * The 30-day chart (dashboard/chart.tsx): the SVG scales to the card; colours are the SVG's own
 * presentation attributes, repeated here for the legend's swatches.
 */
export const CHART_CSS = `
.chart-svg{display:block;width:100%;max-width:760px;height:auto}
.chart-legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:8px 0 4px;font-size:13px}
.chart-key::before{content:"";display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.chart-key-received::before{background:#3b4cca}.chart-key-quarantined::before{background:#d08a00}
.chart-key-spam::before{background:#c23b3b}.chart-key-sent::before{height:3px;width:14px;vertical-align:3px;background:#17663a}
.chart details{margin-top:6px}.chart summary{cursor:pointer;color:var(--accent)}
.chart-table{font-size:13px;margin-top:6px}.chart-table th,.chart-table td{padding:3px 8px}
`;

/**
 * The forms pages' few additions to app.css (the lead appends CSS to the one stylesheet): the
 * tabs of one form's pages, the rate-limit fieldset, the version badges. No JavaScript: the Copy
 * buttons and everything else use app.js as it is.
 */
export const CSS = `
.form-tabs{gap:6px 18px;margin:0 0 16px;padding:0 0 6px;border-bottom:1px solid var(--line);align-items:center}
.form-tabs a{text-decoration:none;padding:4px 2px}
.form-tabs a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom:2px solid var(--accent)}
fieldset{border:1px solid var(--line);border-radius:6px;margin:12px 0;padding:6px 12px 10px}
legend{font-weight:600;padding:0 4px}
.badge-current{background:var(--ok-bg);color:var(--ok)}
${CHART_CSS}`;
