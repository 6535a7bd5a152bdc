/** Styles for the streams, events and team pages (checkbox labels, id lists, long URLs). */
export const CSS = `
label.check{display:flex;gap:6px;align-items:center;font-weight:400;margin:4px 0}
fieldset{border:1px solid var(--line);border-radius:var(--radius);margin:10px 0;padding:6px 12px}
legend{font-weight:600;padding:0 4px}
ul.plain{list-style:none;margin:0;padding:0}
.break{overflow-wrap:anywhere}
`;
