/**
 * The OpenAPI document built in process from the mounted operations (no server, no database).
 *   tsx scripts/openapi.ts snapshot   writes test/api/openapi.snapshot.json (npm run openapi:snapshot)
 *   tsx scripts/openapi.ts lint       lints it with Redocly and Spectral (npm run lint:openapi)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenAPIHono } from '@hono/zod-openapi';
import { mountOperations } from '../server/app.js';
import type { AppEnv } from '../server/http/context.js';
import { openApiDocument } from '../server/openapi.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The base URL the snapshot is written with (the server's default PUBLIC_BASE_URL). */
export const SNAPSHOT_BASE_URL = 'http://localhost:8787';
export const SNAPSHOT_PATH = path.join(ROOT, 'test/api/openapi.snapshot.json');

/** The document as text, exactly as the snapshot holds it. */
export function contractText(baseUrl = SNAPSHOT_BASE_URL): string {
  const app = new OpenAPIHono<AppEnv>();
  mountOperations(app);
  return `${JSON.stringify(openApiDocument(app, baseUrl), null, 2)}\n`;
}

function run(bin: string, args: string[]): boolean {
  console.log(`$ ${bin} ${args.join(' ')}`);
  const r = spawnSync(path.join(ROOT, 'node_modules/.bin', bin), args, {
    cwd: ROOT,
    stdio: 'inherit',
    // Redocly would otherwise try to send usage data and look for updates.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  return r.status === 0;
}

function lint(): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'formsvc-openapi-'));
  const file = path.join(dir, 'openapi.json');
  try {
    fs.writeFileSync(file, contractText());
    const redocly = run('redocly', ['lint', file, '--config', path.join(ROOT, 'redocly.yaml')]);
    const spectral = run('spectral', [
      'lint',
      file,
      '--ruleset',
      path.join(ROOT, '.spectral.yaml'),
      '--fail-severity',
      'error',
    ]);
    return redocly && spectral ? 0 : 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  if (mode === 'snapshot') {
    fs.writeFileSync(SNAPSHOT_PATH, contractText());
    console.log(`wrote ${path.relative(ROOT, SNAPSHOT_PATH)}`);
  } else if (mode === 'lint') {
    process.exitCode = lint();
  } else {
    console.error('usage: tsx scripts/openapi.ts snapshot|lint');
    process.exitCode = 2;
  }
}
