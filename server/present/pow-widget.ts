import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The proof-of-work widget (the `altcha` package's web component), served by formsvc itself from
 * /assets/pow/ (no CDN), in the build that suits a strict CSP: `altcha/external`, which injects no
 * <style> and makes no blob: workers. formsvc's own script is appended to it: it registers the
 * PBKDF2 worker (a file of this origin; from another origin's page, a blob: worker that imports it,
 * since a page cannot start a worker from another origin's URL) and adds the widget's stylesheet.
 */

const require = createRequire(import.meta.url);

/** Attribute-safe, braces too (the Astro snippet reuses the HTML, and Astro reads `{…}` as code). */
const esc = (s: string) => s.replace(/[&<>"'{}]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** Added to the widget's module: `import.meta.url` is this file's own URL, wherever it is embedded. */
const REGISTER = `
;(() => {
  const here = new URL(import.meta.url);
  const at = (name) => new URL(name + here.search, here).href;
  const worker = at('pbkdf2.js');
  const make = here.origin === location.origin
    ? () => new Worker(worker)
    : () => new Worker(URL.createObjectURL(new Blob(['importScripts(' + JSON.stringify(worker) + ')'], { type: 'text/javascript' })));
  for (const name of ['PBKDF2/SHA-256', 'PBKDF2/SHA-384', 'PBKDF2/SHA-512']) globalThis.$altcha.algorithms.set(name, make);
  if (!document.querySelector('link[data-formsvc-altcha]')) {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = at('altcha.css');
    link.setAttribute('data-formsvc-altcha', '');
    document.head.append(link);
  }
})();
`;

export interface PowAsset {
  body: string;
  type: string;
}

let loaded: { files: Record<string, PowAsset>; version: string } | null = null;

/** The widget's files, read once from the installed package; `version` changes with them. */
export function powAssets() {
  if (loaded) return loaded;
  const external = path.dirname(require.resolve('altcha/external')); // dist/external
  const read = (p: string) => fs.readFileSync(path.join(external, p), 'utf8');
  const files: Record<string, PowAsset> = {
    'altcha.js': { body: `${read('altcha.min.js')}\n${REGISTER}`, type: 'text/javascript; charset=utf-8' },
    'altcha.css': { body: read('altcha.css'), type: 'text/css; charset=utf-8' },
    'pbkdf2.js': { body: read('../workers/pbkdf2.js'), type: 'text/javascript; charset=utf-8' },
  };
  const hash = crypto.createHash('sha256');
  for (const f of Object.values(files)) hash.update(f.body);
  loaded = { files, version: hash.digest('hex').slice(0, 12) };
  return loaded;
}

/** The widget's script, as pages load it (a module), under `base` (the public base URL, or '' for this origin). */
export function powScriptUrl(base: string): string {
  return `${base}/assets/pow/altcha.js?v=${powAssets().version}`;
}

/** The widget inside a form: it fetches a challenge, solves it when the form is sent and posts `altcha`. */
export function powWidgetHtml(base: string, formId: string): string {
  return `<altcha-widget challenge="${esc(`${base}/s/${formId}/challenge`)}" name="altcha" auto="onsubmit"></altcha-widget>`;
}

/** The tag that loads the widget. */
export function powScriptTag(base: string): string {
  return `<script type="module" src="${esc(powScriptUrl(base))}"></script>`;
}
