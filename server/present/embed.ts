/** Embed snippets and the verify curl for a form, with its submit URL baked in. Pasted as is, they work. */

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

export interface EmbedField {
  name: string;
  label: string;
  type: 'text' | 'email' | 'textarea' | 'number' | 'checkbox' | 'select' | 'url' | 'date' | 'tel';
  required: boolean;
  placeholder?: string;
  help?: string;
  options?: string[];
}

export const DEFAULT_FIELDS: EmbedField[] = [
  { name: 'name', label: 'Name', type: 'text', required: false },
  { name: 'email', label: 'Email', type: 'email', required: true },
  { name: 'message', label: 'Message', type: 'textarea', required: true },
];

function htmlField(f: EmbedField): string {
  const id = `f-${f.name.replace(/[^a-zA-Z0-9_-]/g, '-')}`;
  const req = f.required ? ' required' : '';
  const ph = f.placeholder ? ` placeholder="${esc(f.placeholder)}"` : '';
  const help = f.help ? `\n    <small id="${id}-help">${esc(f.help)}</small>` : '';
  const described = f.help ? ` aria-describedby="${id}-help"` : '';
  let control: string;
  if (f.type === 'textarea') {
    control = `<textarea id="${id}" name="${esc(f.name)}"${ph}${req}${described}></textarea>`;
  } else if (f.type === 'select') {
    const opts = (f.options ?? []).map((o) => `<option value="${esc(o)}">${esc(o)}</option>`).join('');
    control = `<select id="${id}" name="${esc(f.name)}"${req}${described}>${opts}</select>`;
  } else if (f.type === 'checkbox') {
    control = `<input id="${id}" type="checkbox" name="${esc(f.name)}" value="true"${req}${described}>`;
  } else {
    control = `<input id="${id}" type="${f.type}" name="${esc(f.name)}"${ph}${req}${described}>`;
  }
  return `  <p>\n    <label for="${id}">${esc(f.label)}</label>\n    ${control}${help}\n  </p>`;
}

export function buildEmbed(submitUrl: string, fields: EmbedField[] = DEFAULT_FIELDS, honeypot = '_gotcha') {
  const names = fields.map((f) => f.name);
  const html = [
    `<form action="${esc(submitUrl)}" method="POST">`,
    ...fields.map(htmlField),
    `  <input type="text" name="${esc(honeypot)}" tabindex="-1" autocomplete="off" style="display:none" aria-hidden="true">`,
    '  <button type="submit">Send</button>',
    '</form>',
  ].join('\n');
  const sample = Object.fromEntries(names.map((n) => [n, n === 'email' ? 'ada@example.com' : `example ${n}`]));
  const fetchSnippet = [
    `const res = await fetch(${JSON.stringify(submitUrl)}, {`,
    "  method: 'POST',",
    "  headers: { 'Content-Type': 'application/json', Accept: 'application/json' },",
    `  body: JSON.stringify(${JSON.stringify(sample)}),`,
    '});',
    'const result = await res.json(); // { ok, submission_id, status }',
  ].join('\n');
  const react = [
    'export function ContactForm() {',
    "  const [state, setState] = React.useState('idle');",
    '  async function onSubmit(event) {',
    '    event.preventDefault();',
    "    setState('sending');",
    `    const res = await fetch(${JSON.stringify(submitUrl)}, {`,
    "      method: 'POST',",
    "      headers: { Accept: 'application/json' },",
    '      body: new FormData(event.currentTarget),',
    '    });',
    "    setState(res.ok ? 'sent' : 'error');",
    '  }',
    "  if (state === 'sent') return <p>Thank you!</p>;",
    '  return (',
    '    <form onSubmit={onSubmit}>',
    ...fields.map((f) =>
      f.type === 'textarea'
        ? `      <label>${esc(f.label)} <textarea name=${JSON.stringify(f.name)}${f.required ? ' required' : ''} /></label>`
        : `      <label>${esc(f.label)} <input type=${JSON.stringify(f.type === 'select' ? 'text' : f.type)} name=${JSON.stringify(f.name)}${f.required ? ' required' : ''} /></label>`,
    ),
    `      <input type="text" name=${JSON.stringify(honeypot)} tabIndex={-1} autoComplete="off" style={{ display: 'none' }} />`,
    '      <button type="submit" disabled={state === \'sending\'}>Send</button>',
    '      {state === \'error\' && <p role="alert">Sending failed, please try again.</p>}',
    '    </form>',
    '  );',
    '}',
  ].join('\n');
  const astro = [
    '---',
    `const action = ${JSON.stringify(submitUrl)};`,
    '---',
    html.replace(esc(submitUrl), '{action}'),
  ].join('\n');
  const nextjs = [
    "'use server';",
    '',
    'export async function submitForm(formData: FormData) {',
    `  const res = await fetch(${JSON.stringify(submitUrl)}, {`,
    "    method: 'POST',",
    "    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },",
    '    body: JSON.stringify(Object.fromEntries(formData)),',
    '  });',
    "  if (!res.ok) throw new Error('submission failed: ' + res.status);",
    '  return res.json();',
    '}',
  ].join('\n');
  return { html, fetch: fetchSnippet, react, astro, nextjs_action: nextjs };
}

export function buildVerify(submitUrl: string) {
  const body = JSON.stringify({ email: 'test@example.com', message: 'Hello from formsvc', _test: true });
  return {
    curl: `curl -sS -X POST '${submitUrl}' -H 'Content-Type: application/json' -H 'Accept: application/json' -d '${body}'`,
    then: 'The answer has submission_id (and deliveries for each route). GET /v1/submissions/{submission_id} shows it with its deliveries.',
  };
}
