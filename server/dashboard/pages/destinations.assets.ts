/**
 * Extra CSS of the destination, route and delivery pages (the lead appends it to app.css): the type
 * list as a row of links, fieldsets of the route form, checkbox and radio labels in normal weight,
 * and the test result card.
 */
export const CSS = `
ul.plain{list-style:none;padding:0;margin:0 0 14px}
fieldset{border:1px solid var(--line);border-radius:6px;margin:14px 0;padding:6px 14px 12px}
legend{font-weight:600;padding:0 4px}
.check label,fieldset label[for^=mode-]{font-weight:400}
.check input,fieldset input[type=radio]{margin:0 6px 0 0}
.notice-card{border-left:4px solid var(--ok)}
`;
