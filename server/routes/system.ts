import fs from 'node:fs';
import path from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { systemOps } from '../../shared/contracts/system.js';
import { ERROR_CODES } from '../../shared/errors.js';
import { readyAnswer } from '../fleet/http.js';
import { type AppEnv, send } from '../http/context.js';
import { mount } from '../http/mount.js';
import { openApiDocument } from '../openapi.js';
import { PACKAGE_ROOT } from '../package-root.js';
import { escapeHtml } from '../present/html.js';

let llms: string | undefined;

/** llms.txt with this server's base URL in place of the placeholder. */
function llmsText(baseUrl: string): string {
  llms ??= fs.readFileSync(path.join(PACKAGE_ROOT, 'llms.txt'), 'utf8');
  return llms.replaceAll('http://localhost:8787', baseUrl);
}

export function errorsPage(): string {
  const rows = Object.entries(ERROR_CODES)
    .map(
      ([code, e]) =>
        `<section id="${code}"><h2><code>${code}</code> · ${e.status}</h2><p>${escapeHtml(e.meaning)}</p><p><strong>What to do:</strong> ${escapeHtml(e.hint)}</p></section>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Error codes · formsvc</title></head><body><main><h1>Error codes</h1><p>Every error answers <code>{"error": {"code", "message", "hint", "docs", "details"}}</code>.</p>\n${rows}\n</main></body></html>`;
}

export function registerSystem(app: OpenAPIHono<AppEnv>) {
  mount(app, systemOps.health, (c) => send(c, { ok: true as const }));
  mount(app, systemOps.ready, (c) => readyAnswer(c, c.get('deps')) as never);
  mount(app, systemOps.llms, (c) => {
    c.header('content-type', 'text/markdown; charset=utf-8');
    return c.body(llmsText(c.get('deps').config.publicBaseUrl), 200) as never;
  });
  mount(app, systemOps.openapi, (c) => c.json(openApiDocument(app, c.get('deps').config.publicBaseUrl), 200) as never);
  mount(app, systemOps.errorsDoc, (c) => c.html(errorsPage(), 200) as never);
}
