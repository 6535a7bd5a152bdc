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
`;
