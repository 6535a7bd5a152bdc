import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { buildEmbed, type EmbedField } from '../../server/present/embed.js';

/** Names and labels that would break out of a string literal or markup if pasted raw. */
const HOSTILE = [
  `a'b`,
  'c"d',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${…} is what must stay inert
  'e`f${globalThis.pwned = 1}',
  '</script><script>pwned()</script>',
  '{pwned()}',
  'g\\h',
  'line\nbreak',
];
const fields: EmbedField[] = HOSTILE.map((name, i) => ({
  name,
  label: `${name} label`,
  type: i % 2 ? 'text' : 'textarea',
  required: false,
  placeholder: name,
}));
// biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${…} is what must stay inert
const submitUrl = 'http://h.example/s/fm_1?x=\'"`${pwned}`';

/** JavaScript (or TSX) as TypeScript reads it: the syntax errors it finds. */
function syntaxErrors(code: string, jsx: boolean) {
  const out = ts.transpileModule(code, {
    reportDiagnostics: true,
    fileName: jsx ? 'snippet.tsx' : 'snippet.ts',
    compilerOptions: { jsx: ts.JsxEmit.React, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  return {
    errors: (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    js: out.outputText,
  };
}

describe('embed snippets insert every value as a string literal of their language', () => {
  const embed = buildEmbed(submitUrl, fields);

  it('fetch: parses, posts to the submit URL a body keyed by the exact field names', async () => {
    expect(syntaxErrors(embed.fetch, false).errors).toEqual([]);
    const calls: [string, RequestInit][] = [];
    const fakeFetch = async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      return { json: async () => (url.endsWith('/render') ? { token: 'signed.1' } : {}) };
    };
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor;
    await new AsyncFunction('fetch', embed.fetch)(fakeFetch);
    // The render token when the page loads, then the post that sends it back as _rendered.
    expect(calls.map((c) => c[0])).toEqual([`${submitUrl}/render`, submitUrl]);
    const body = JSON.parse(String(calls[1][1].body));
    expect(Object.keys(body)).toEqual([...HOSTILE, '_rendered']);
    expect(body._rendered).toBe('signed.1');
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
  });

  it('react: compiles, and each control’s name, label and placeholder are the values as given', () => {
    const { errors, js } = syntaxErrors(embed.react, true);
    expect(errors).toEqual([]);
    const made: { type: unknown; props: Record<string, unknown> | null; children: unknown[] }[] = [];
    const React = {
      useState: (v: unknown) => [v, () => {}],
      createElement: (type: unknown, props: Record<string, unknown> | null, ...children: unknown[]) => {
        const el = { type, props, children };
        made.push(el);
        return el;
      },
    };
    const body = js.replace(/^export /m, '');
    new Function('React', `${body}\nreturn ContactForm();`)(React);
    const named = made.filter((e) => e.props && typeof e.props.name === 'string' && e.props.name !== '_gotcha');
    expect(named.map((e) => e.props?.name)).toEqual(HOSTILE);
    expect(named.map((e) => e.props?.placeholder)).toEqual(HOSTILE);
    const labels = made.filter((e) => e.type === 'label').map((e) => e.children.join(''));
    expect(labels).toEqual(HOSTILE.map((n) => `${n} label`));
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
  });

  it('nextjs_action and astro: the submit URL is one string literal', () => {
    const next = syntaxErrors(embed.nextjs_action, false);
    expect(next.errors).toEqual([]);
    expect(next.js).toContain(`fetch(${JSON.stringify(submitUrl)}`);
    const frontmatter = embed.astro.split('---')[1];
    expect(syntaxErrors(frontmatter, false).errors).toEqual([]);
    expect(frontmatter).toContain(`const action = ${JSON.stringify(submitUrl)};`);
    // The markup holds no raw brace, quote or angle bracket of a value: Astro reads none of it as code.
    const markup = embed.astro.split('---')[2];
    for (const name of HOSTILE) expect(markup).not.toContain(name);
  });
});
