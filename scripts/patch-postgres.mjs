#!/usr/bin/env node
/**
 * Mends one defect of postgres.js 3.4.9 in node_modules (run by `npm install`/`npm ci` as the
 * postinstall step; safe to run again).
 *
 * Small writes wait for a setImmediate (`nextWriteTimer`) and are buffered in `chunk`; only the
 * write itself sets both back to null. When a connection's socket closes (or the connection is
 * terminated) while such a write waits, the driver cancels the immediate but leaves the timer id
 * set and the buffer full. On that connection's next start-up the start-up message is appended to
 * the stale buffer and, the timer looking armed, never sent: the attempt hangs until
 * `connect_timeout`, then again on every later attempt, until the buffer passes 1 KiB. After a
 * database outage one pool connection thus failed every query it was given (503) for a minute.
 * The mend clears both where the immediate is cancelled, which is what the write would have done.
 * No released version fixes it yet; a driver of another version is left alone and the script says
 * so, so that an upgrade is looked at rather than patched blindly.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PATCH_MARK = 'formsvc: stale write timer cleared';
const VERSION = '3.4.9';
const CANCEL = /^( {4})clearImmediate\(nextWriteTimer\)$/gm;

/** The driver's package directory, resolved from this project. */
function driverDir() {
  const require = createRequire(import.meta.url);
  // The "default" export is cjs/src/index.js: two levels below the package.
  return path.resolve(path.dirname(require.resolve('postgres')), '..', '..');
}

/** Every connection.js of the installed driver (the ESM, CommonJS and Workers builds). */
export function driverFiles() {
  const dir = driverDir();
  return ['src', 'cjs/src', 'cf/src'].map((d) => path.join(dir, d, 'connection.js')).filter((f) => fs.existsSync(f));
}

/** Patches the files; returns what it did per file. */
export function patch() {
  const dir = driverDir();
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  if (version !== VERSION)
    return [`postgres ${version} is not ${VERSION}: not patched (see scripts/patch-postgres.mjs)`];
  return driverFiles().map((file) => {
    const text = fs.readFileSync(file, 'utf8');
    if (text.includes(PATCH_MARK)) return `${file}: already patched`;
    fs.writeFileSync(file, mendText(text, file));
    return `${file}: patched`;
  });
}

/** The mended text of one connection.js (scripts/build.mjs applies it to the bundled driver too). */
export function mendText(text, file) {
  const sites = text.match(CANCEL)?.length ?? 0;
  if (sites !== 2) throw new Error(`${file}: expected 2 places that cancel the write timer, found ${sites}`);
  return text.replace(CANCEL, `$1clearImmediate(nextWriteTimer)\n$1chunk = nextWriteTimer = null // ${PATCH_MARK}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const line of patch()) console.error(`patch-postgres: ${line}`);
}
