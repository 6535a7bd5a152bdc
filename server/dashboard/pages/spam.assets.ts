/** Styles for the Spam page and the submission's spam signals (list kinds side by side, token tables). */
export const CSS = `
.spam-kinds{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:4px 16px}
.spam-kinds>div{display:flex;flex-direction:column}.spam-kinds textarea{min-height:90px;margin-top:auto}
h3.spam-kind{font-size:14px;margin:10px 0 4px}
.spam-tokens{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:12px;margin:12px 0}
.spam-score{font-size:20px;font-weight:600}
`;
