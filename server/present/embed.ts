/** Embed snippets and the verify curl for a form, with its submit URL baked in. Pasted as is, they work. */

import { isObj, type Obj } from '../../shared/objects.js';
import { shellQuote } from '../../shared/shell.js';
import { canonicalOrigin } from '../domain/checks.js';
import { humanize } from '../schemas/infer.js';
import { powScriptUrl } from './pow-widget.js';

// Braces too: the astro snippet reuses the HTML, and Astro reads `{…}` in markup as an expression.
const esc = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/\{/g, '&#123;')
    .replace(/\}/g, '&#125;');

export type EmbedFieldType =
  | 'text'
  | 'email'
  | 'textarea'
  | 'number'
  | 'checkbox'
  | 'select'
  | 'radio'
  | 'url'
  | 'date'
  | 'datetime-local'
  | 'tel';

export interface EmbedOption {
  value: string;
  label: string;
}

export interface EmbedField {
  name: string;
  label: string;
  type: EmbedFieldType;
  required: boolean;
  placeholder?: string;
  help?: string;
  options?: EmbedOption[];
  /** number inputs: from minimum / maximum; step "any" when fractions are valid. */
  min?: number;
  max?: number;
  step?: 'any';
  /** text-like inputs: from minLength / maxLength / pattern (already anchored for HTML). */
  minlength?: number;
  maxlength?: number;
  pattern?: string;
}

export const DEFAULT_FIELDS: EmbedField[] = [
  { name: 'name', label: 'Name', type: 'text', required: false },
  { name: 'email', label: 'Email', type: 'email', required: true },
  { name: 'message', label: 'Message', type: 'textarea', required: true },
];

const TEXT_LIKE = new Set<EmbedFieldType>(['text', 'email', 'url', 'tel', 'textarea']);
/** Controls that offer the field's options. */
const CHOICES = new Set<EmbedFieldType>(['select', 'radio']);
/** HTML's pattern attribute applies to these (not textarea). */
const PATTERN_TYPES = new Set<EmbedFieldType>(['text', 'email', 'url', 'tel']);

const WIDGETS: Record<string, EmbedFieldType> = {
  text: 'text',
  email: 'email',
  textarea: 'textarea',
  number: 'number',
  checkbox: 'checkbox',
  select: 'select',
  url: 'url',
  date: 'date',
  'datetime-local': 'datetime-local',
  tel: 'tel',
  radio: 'radio',
  // Aliases people write in ui hints.
  datetime: 'datetime-local',
  'date-time': 'datetime-local',
  uri: 'url',
  phone: 'tel',
};

const FORMAT_TYPES: Record<string, EmbedFieldType> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

/** Own keys only: a widget or format named "constructor" must not find Object's. */
const lookup = <T>(table: Record<string, T>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The first non-null JSON type a property declares. */
function typeOf(prop: Obj): string | undefined {
  const types = ([] as unknown[]).concat(prop.type ?? []);
  return types.find((t): t is string => typeof t === 'string' && t !== 'null');
}

/** format, or the format of an anyOf/oneOf branch (inferred drafts write `anyOf [{format}, {const: ""}]`). */
function formatOf(prop: Obj): string | undefined {
  if (typeof prop.format === 'string') return prop.format;
  for (const key of ['anyOf', 'oneOf']) {
    const branches = prop[key];
    if (!Array.isArray(branches)) continue;
    const found = branches.find((b) => isObj(b) && typeof b.format === 'string') as Obj | undefined;
    if (found) return found.format as string;
  }
  return undefined;
}

function optionsOf(prop: Obj, hint: Obj): EmbedOption[] {
  if (Array.isArray(hint.options)) {
    return hint.options.flatMap((o): EmbedOption[] => {
      if (isObj(o)) {
        if (!['string', 'number', 'boolean'].includes(typeof o.value)) return [];
        const value = String(o.value);
        return [{ value, label: str(o.label) ?? value }];
      }
      return ['string', 'number', 'boolean'].includes(typeof o) ? [{ value: String(o), label: String(o) }] : [];
    });
  }
  if (!Array.isArray(prop.enum)) return [];
  // Blank and null members only make the field optional; they are not choices.
  return prop.enum
    .filter((v) => v !== '' && ['string', 'number', 'boolean'].includes(typeof v))
    .map((v) => ({ value: String(v), label: String(v) }));
}

function typeFor(prop: Obj, hint: Obj, options: EmbedOption[]): EmbedFieldType {
  const widget = typeof hint.widget === 'string' ? lookup(WIDGETS, hint.widget.toLowerCase()) : undefined;
  // A select or radio group needs choices; without any the derived control is the better one.
  if (widget && (!CHOICES.has(widget) || options.length)) return widget;
  if (options.length) return 'select';
  const type = typeOf(prop);
  if (type === 'boolean') return 'checkbox';
  if (type === 'integer' || type === 'number') return 'number';
  const byFormat = lookup(FORMAT_TYPES, formatOf(prop) ?? '');
  if (byFormat) return byFormat;
  if ((num(prop.maxLength) ?? 0) > 200) return 'textarea';
  return 'text';
}

/**
 * JSON Schema patterns match anywhere in the value; HTML's pattern attribute must match all of it.
 * Fully anchored patterns stay as written, others are padded to a substring match.
 */
function htmlPattern(p: string): string {
  return p.startsWith('^') && p.endsWith('$') && !p.endsWith('\\$') ? p : `.*(?:${p}).*`;
}

/**
 * Form controls from a schema version: one per property of the root, ordered by ui.order (fields
 * without one follow, by name). The label, placeholder, help, options and widget come from
 * the ui hints; otherwise the label is the humanized name, options are the schema's enum and the
 * control is derived from type and format. required, min/max, minlength/maxlength and pattern come
 * from the schema. Control fields (a leading "_") are left out: intake never stores them as data.
 */
export function fieldsFromSchema(jsonSchema: unknown, ui: unknown): EmbedField[] {
  const schema = isObj(jsonSchema) ? jsonSchema : {};
  const props = isObj(schema.properties) ? schema.properties : {};
  const hints = isObj(ui) ? ui : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const names = Object.keys(props).filter((n) => !n.startsWith('_'));
  const rank = (n: string) => num((isObj(hints[n]) ? hints[n] : {}).order) ?? Number.POSITIVE_INFINITY;
  // Fields without an order follow by name: stored schemas (jsonb) do not keep their key order.
  names.sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra < rb ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return names.map((name) => {
    const prop = isObj(props[name]) ? props[name] : {};
    const hint = isObj(hints[name]) ? hints[name] : {};
    const options = optionsOf(prop, hint);
    const type = typeFor(prop, hint, options);
    const field: EmbedField = { name, label: str(hint.label) ?? humanize(name), type, required: required.has(name) };
    const placeholder = str(hint.placeholder);
    if (placeholder) field.placeholder = placeholder;
    const help = str(hint.help);
    if (help) field.help = help;
    if (CHOICES.has(type)) field.options = options;
    if (type === 'number') {
      field.min = num(prop.minimum);
      field.max = num(prop.maximum);
      if (typeOf(prop) !== 'integer') field.step = 'any';
    }
    if (TEXT_LIKE.has(type)) {
      field.minlength = num(prop.minLength);
      field.maxlength = num(prop.maxLength);
    }
    if (PATTERN_TYPES.has(type) && typeof prop.pattern === 'string') field.pattern = htmlPattern(prop.pattern);
    for (const k of Object.keys(field) as (keyof EmbedField)[]) if (field[k] === undefined) delete field[k];
    return field;
  });
}

/** Unique element ids (label for= and aria-describedby need them unique): "a b" and "a-b" differ. */
export function controlIds(fields: EmbedField[]): string[] {
  const used = new Set<string>();
  return fields.map((f) => {
    const base = `f-${f.name.replace(/[^a-zA-Z0-9_-]/g, '-')}`;
    let id = base;
    for (let i = 2; used.has(id); i += 1) id = `${base}-${i}`;
    used.add(id);
    return id;
  });
}

/** The optional attributes of a control, in one order for HTML and JSX. */
function constraints(f: EmbedField): [string, string | number][] {
  const out: [string, string | number][] = [];
  if (f.placeholder && !CHOICES.has(f.type) && f.type !== 'checkbox') out.push(['placeholder', f.placeholder]);
  if (f.min !== undefined) out.push(['min', f.min]);
  if (f.max !== undefined) out.push(['max', f.max]);
  if (f.step) out.push(['step', f.step]);
  if (f.minlength !== undefined) out.push(['minlength', f.minlength]);
  if (f.maxlength !== undefined) out.push(['maxlength', f.maxlength]);
  if (f.pattern) out.push(['pattern', f.pattern]);
  return out;
}

/** A required select opens on an empty choice, so the browser makes the visitor pick one. */
const blankOption = (f: EmbedField) => (f.required ? (f.placeholder ?? 'Choose…') : null);

/**
 * What a rendered field shows beyond the empty control (the hosted page after a schema_violation):
 * the value the visitor sent, and the error to show next to it. The embed renders without one.
 */
export interface FieldState {
  value?: unknown;
  error?: string;
}

/** A sent value as the control's text: the first of a list, numbers and booleans as written. */
function textOf(v: unknown): string | undefined {
  const one = Array.isArray(v) ? v[0] : v;
  if (typeof one === 'string') return one;
  if (typeof one === 'number' || typeof one === 'boolean') return String(one);
  return undefined;
}

/** A datetime-local control takes "YYYY-MM-DDTHH:MM": stored RFC 3339 values keep their local part. */
function controlValue(f: EmbedField, v: unknown): string | undefined {
  const text = textOf(v);
  if (text === undefined) return undefined;
  if (f.type === 'datetime-local') return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) ? text.slice(0, 16) : text;
  return text;
}

const isChosen = (v: unknown, option: string) => (Array.isArray(v) ? v : [v]).some((x) => textOf(x) === option);
const isTicked = (v: unknown) => v === true || (typeof v === 'string' && ['true', 'on', '1'].includes(v));

function htmlField(f: EmbedField, id: string, state?: FieldState): string {
  const attrs = constraints(f)
    .map(([k, v]) => ` ${k}="${esc(String(v))}"`)
    .join('');
  const req = f.required ? ' required' : '';
  const help = f.help ? `\n    <small id="${id}-help">${esc(f.help)}</small>` : '';
  const error = state?.error ? `\n    <small id="${id}-error" class="field-error">${esc(state.error)}</small>` : '';
  const describedBy = [f.help ? `${id}-help` : '', state?.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const described = describedBy ? ` aria-describedby="${describedBy}"` : '';
  const invalid = state?.error ? ' aria-invalid="true"' : '';
  const common = `id="${id}" name="${esc(f.name)}"`;
  const sent = state?.value;
  let control: string;
  if (f.type === 'radio') {
    // A group: the legend labels it, each option has its own label; one required radio makes the
    // browser ask for a choice.
    const opts = (f.options ?? []).map(
      (o, i) =>
        `    <label><input type="radio" id="${id}-${i + 1}" name="${esc(f.name)}" value="${esc(o.value)}"${req}${isChosen(sent, o.value) ? ' checked' : ''}> ${esc(o.label)}</label>`,
    );
    return [
      `  <fieldset${described}>`,
      `    <legend>${esc(f.label)}</legend>`,
      ...opts,
      ...(f.help ? [`    <small id="${id}-help">${esc(f.help)}</small>`] : []),
      ...(state?.error ? [`    <small id="${id}-error" class="field-error">${esc(state.error)}</small>`] : []),
      '  </fieldset>',
    ].join('\n');
  }
  const value = controlValue(f, sent);
  if (f.type === 'textarea') {
    control = `<textarea ${common}${attrs}${req}${described}${invalid}>${value === undefined ? '' : esc(value)}</textarea>`;
  } else if (f.type === 'select') {
    const blank = blankOption(f);
    const opts = [
      ...(blank === null ? [] : [`<option value="">${esc(blank)}</option>`]),
      ...(f.options ?? []).map(
        (o) => `<option value="${esc(o.value)}"${isChosen(sent, o.value) ? ' selected' : ''}>${esc(o.label)}</option>`,
      ),
    ].join('');
    control = `<select ${common}${req}${described}${invalid}>${opts}</select>`;
  } else if (f.type === 'checkbox') {
    control = `<input ${common} type="checkbox" value="true"${req}${described}${invalid}${isTicked(sent) ? ' checked' : ''}>`;
  } else {
    const kept = value === undefined ? '' : ` value="${esc(value)}"`;
    control = `<input ${common} type="${f.type}"${attrs}${req}${described}${invalid}${kept}>`;
  }
  return `  <p>\n    <label for="${id}">${esc(f.label)}</label>\n    ${control}${help}${error}\n  </p>`;
}

/**
 * The form's controls as HTML, one block per field (what the embed snippet holds between its form
 * tags): labels, help, options and constraints from the field list, every value escaped. With
 * `state` (by field name) each control shows the value sent and its error next to it.
 */
export function fieldsHtml(fields: EmbedField[], state?: Record<string, FieldState>): string {
  const ids = controlIds(fields);
  return fields
    .map((f, i) => htmlField(f, ids[i], state && Object.hasOwn(state, f.name) ? state[f.name] : undefined))
    .join('\n');
}

const JSX_NAMES: Record<string, string> = { minlength: 'minLength', maxlength: 'maxLength' };

/**
 * A JSX attribute. JSX string attributes have no escapes (only entities), so a value with `"` or `&`
 * goes in an expression container as a JS string literal instead.
 */
function jsx(k: string, v: string | number): string {
  const name = JSX_NAMES[k] ?? k;
  if (typeof v === 'number') return ` ${name}={${v}}`;
  return /["&]/.test(v) ? ` ${name}={${JSON.stringify(v)}}` : ` ${name}="${v}"`;
}

/**
 * JSX text: plain when nothing in it is markup, a string-literal expression otherwise (JSX folds a
 * line break and the spaces around it into one space, so text with one goes in an expression too).
 */
const jsxText = (s: string) => (/[{}<>&\r\n\u2028\u2029]/.test(s) || s.trim() !== s ? `{${JSON.stringify(s)}}` : s);

function reactField(f: EmbedField, id: string): string[] {
  const attrs = constraints(f)
    .map(([k, v]) => jsx(k, v))
    .join('');
  const req = f.required ? ' required' : '';
  const described = f.help ? jsx('aria-describedby', `${id}-help`) : '';
  const common = `${jsx('id', id)}${jsx('name', f.name)}`.trimStart();
  let control: string;
  if (f.type === 'radio') {
    return [
      `      <fieldset${described}>`,
      `        <legend>${jsxText(f.label)}</legend>`,
      ...(f.options ?? []).map(
        (o, i) =>
          `        <label><input type="radio"${jsx('id', `${id}-${i + 1}`)}${jsx('name', f.name)}${jsx('value', o.value)}${req} /> ${jsxText(o.label)}</label>`,
      ),
      ...(f.help ? [`        <small${jsx('id', `${id}-help`)}>${jsxText(f.help)}</small>`] : []),
      '      </fieldset>',
    ];
  }
  if (f.type === 'textarea') {
    control = `<textarea ${common}${attrs}${req}${described} />`;
  } else if (f.type === 'select') {
    const blank = blankOption(f);
    const opts = [
      ...(blank === null ? [] : [`<option value="">${jsxText(blank)}</option>`]),
      ...(f.options ?? []).map((o) => `<option${jsx('value', o.value)}>${jsxText(o.label)}</option>`),
    ].join('');
    control = `<select ${common}${req}${described}>${opts}</select>`;
  } else if (f.type === 'checkbox') {
    control = `<input ${common} type="checkbox" value="true"${req}${described} />`;
  } else {
    control = `<input ${common} type="${f.type}"${attrs}${req}${described} />`;
  }
  return [
    `      <label${jsx('htmlFor', id)}>${jsxText(f.label)}</label>`,
    `      ${control}`,
    ...(f.help ? [`      <small${jsx('id', `${id}-help`)}>${jsxText(f.help)}</small>`] : []),
  ];
}

/** A value the field accepts, for the fetch example. */
export function sampleValue(f: EmbedField): unknown {
  switch (f.type) {
    case 'email':
      return 'ada@example.com';
    case 'number':
      return f.min ?? (f.max !== undefined && f.max < 1 ? f.max : 1);
    case 'checkbox':
      return true;
    case 'select':
    case 'radio':
      return f.options?.[0]?.value ?? `example ${f.name}`;
    case 'url':
      return 'https://example.com';
    case 'date':
      return '2025-01-31';
    case 'datetime-local':
      return '2025-01-31T09:30:00Z';
    case 'tel':
      return '+1 555 0100';
    default:
      return f.name === 'email' ? 'ada@example.com' : `example ${f.name}`;
  }
}

/**
 * A JS string literal inside <script>: entities are not decoded there, `</script` must not appear,
 * and no brace either (the Astro snippet would read one as an expression).
 */
const scriptString = (s: string) =>
  JSON.stringify(s).replace(/[<{}]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The hidden `_rendered` input and the one line that fills it from GET /s/{formId}/render when the
 * page loads (the owner's page, not ours: no CSP of ours applies). Without it a post scores nothing.
 */
function renderInput(renderUrl: string): string[] {
  return [
    '  <input type="hidden" name="_rendered">',
    `  <script>(i=>fetch(${scriptString(renderUrl)}).then(r=>r.json()).then(j=>i.value=j.token))(document.currentScript.previousElementSibling)</script>`,
  ];
}

/**
 * The snippets of a form. `pow`: the form asks for proof of work (settings.challenge provider
 * "pow"): the HTML loads formsvc's widget, which solves the challenge when the form is sent; the
 * fetch and Next.js snippets get and solve one in code (altcha-lib) and send it in X-Altcha.
 */
export function buildEmbed(
  submitUrl: string,
  fields: EmbedField[] = DEFAULT_FIELDS,
  honeypot = '_gotcha',
  opts: { pow?: boolean } = {},
) {
  const ids = controlIds(fields);
  const pow = opts.pow ? powParts(submitUrl) : null;
  const renderUrl = `${submitUrl}/render`;
  const html = [
    ...(pow ? [pow.script] : []),
    `<form action="${esc(submitUrl)}" method="POST">`,
    fieldsHtml(fields),
    `  <input type="text" name="${esc(honeypot)}" tabindex="-1" autocomplete="off" style="display:none" aria-hidden="true">`,
    ...renderInput(renderUrl),
    ...(pow ? [pow.widget('onsubmit')] : []),
    '  <button type="submit">Send</button>',
    '</form>',
  ].join('\n');
  const sample = Object.fromEntries(fields.map((f) => [f.name, sampleValue(f)]));
  const fetchSnippet = [
    '// When the page loads: the signed time it was shown (a post sooner than 2 s after it scores as spam).',
    `const rendered = fetch(${JSON.stringify(renderUrl)}).then((r) => r.json()).then((j) => j.token);`,
    '// When the visitor sends:',
    ...(pow ? pow.solve('') : []),
    `const res = await fetch(${JSON.stringify(submitUrl)}, {`,
    "  method: 'POST',",
    `  headers: { 'Content-Type': 'application/json', Accept: 'application/json'${pow ? ", 'X-Altcha': altcha" : ''} },`,
    `  body: JSON.stringify({ ...${JSON.stringify(sample)}, _rendered: await rendered }),`,
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
    ...fields.flatMap((f, i) => reactField(f, ids[i])),
    `      <input type="text"${jsx('name', honeypot)} tabIndex={-1} autoComplete="off" style={{ display: 'none' }} aria-hidden="true" />`,
    ...(pow
      ? [
          '      {/* The proof-of-work widget (load its script once on the page): ticked, it adds the field altcha. */}',
          `      <altcha-widget${jsx('challenge', pow.challengeUrl)} name="altcha" />`,
        ]
      : []),
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
    html.replace(esc(submitUrl), '{action}').replace('<script>', '<script is:inline>'),
  ].join('\n');
  const nextjs = [
    "'use server';",
    ...(pow ? ['', ...pow.imports] : []),
    '',
    'export async function submitForm(formData: FormData) {',
    ...(pow ? pow.solve('  ').filter((l) => !l.startsWith('import')) : []),
    `  const res = await fetch(${JSON.stringify(submitUrl)}, {`,
    "    method: 'POST',",
    `    headers: { Accept: 'application/json'${pow ? ", 'X-Altcha': altcha" : ''} },`,
    "    // Form data as the browser would post it: typed by the form's schema, repeated fields and files kept.",
    '    body: formData,',
    '  });',
    "  if (!res.ok) throw new Error('submission failed: ' + res.status);",
    '  return res.json();',
    '}',
    '',
    '// Render the form with <input type="hidden" name="_rendered" value={await renderedToken()} />: the',
    '// signed time the page was shown (a post sooner than 2 s after it scores as spam).',
    'export async function renderedToken(): Promise<string> {',
    `  const res = await fetch(${JSON.stringify(renderUrl)}, { cache: 'no-store' });`,
    '  return (await res.json()).token;',
    '}',
  ].join('\n');
  return { html, fetch: fetchSnippet, react, astro, nextjs_action: nextjs };
}

/** The pieces of the snippets for a form that asks for proof of work (domain/pow.ts). */
function powParts(submitUrl: string) {
  const challengeUrl = `${submitUrl}/challenge`;
  const base = submitUrl.replace(/\/s\/[^/]*$/, '');
  const imports = [
    "import { solveChallenge } from 'altcha-lib';",
    "import { deriveKey } from 'altcha-lib/algorithms/web/pbkdf2';",
  ];
  return {
    challengeUrl,
    imports,
    script: `<script type="module" src="${esc(powScriptUrl(base))}"></script>`,
    widget: (auto: string) =>
      `  <altcha-widget challenge="${esc(challengeUrl)}" name="altcha" auto="${auto}"></altcha-widget>`,
    /** Gets a challenge and solves it (npm install altcha-lib): `altcha` is what X-Altcha carries. */
    solve: (indent: string) => [
      ...imports,
      ...[
        '// The form asks for proof of work: get a challenge, solve it (about half a second), send it.',
        `const challenge = await (await fetch(${JSON.stringify(challengeUrl)})).json();`,
        'const solution = await solveChallenge({ challenge, deriveKey });',
        'const altcha = btoa(JSON.stringify({ challenge, solution }));',
      ].map((l) => indent + l),
    ],
  };
}

/**
 * The test submission as a curl line. A form that only accepts some origins quarantines a post
 * without an `Origin` header, so the line then sends the first origin it allows, as a browser on
 * that site would.
 */
export function buildVerify(submitUrl: string, allowedOrigins?: unknown) {
  const body = JSON.stringify({ email: 'test@example.com', message: 'Hello from formsvc', _test: true });
  const origin = Array.isArray(allowedOrigins)
    ? allowedOrigins.map((o) => canonicalOrigin(String(o))).find((o) => o !== null)
    : undefined;
  // Every value is shell-quoted: a stored origin or base URL cannot end the quote and run something.
  const originHeader = origin ? ` -H ${shellQuote(`Origin: ${origin}`)}` : '';
  return {
    curl: `curl -sS -X POST ${shellQuote(submitUrl)} -H 'Content-Type: application/json' -H 'Accept: application/json'${originHeader} -d ${shellQuote(body)}`,
    then: 'The answer has submission_id (and deliveries for each route). GET /v1/submissions/{submission_id} shows it with its deliveries.',
  };
}
