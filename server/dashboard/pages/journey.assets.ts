/**
 * Small layout fixes seen in the journey's screenshots (the lead appends CSS to the one
 * stylesheet): a card's first heading no longer stacks its top margin on the card's padding; a
 * table caption reads left-aligned like the rest of the page; a row of actions at the top level of
 * a page (the submission's "Mark as spam") keeps a gap above the next card; help text sits right
 * under its field (a textarea is a block, so no line-box gap under it); and the allowed-origins box
 * is as wide as the other settings fields instead of the whole card.
 */
export const CSS = `
.card>h2:first-child,.card>h3:first-child{margin-top:0}
caption{text-align:left;padding:0 0 6px}
main>.row:not(:has(h1)){margin:0 0 16px}
textarea{display:block}
p.help{margin:4px 0 0}
#s-origins{max-width:520px;min-height:84px}
`;
