/**
 * Whether dist/ was built from the sources as they are now. scripts/build.mjs writes
 * dist/build-stamp.json (every source file esbuild read, with its SHA-256); in a clone, `npm start`
 * (scripts/start.mjs) and the `formsvc` bin check it before running dist/ and refuse a missing or
 * stale build with one line. A file whose mtime is not newer than the build is taken as unchanged;
 * a newer one is hashed, so a touch or a checkout without changes does not count as stale.
 * The installed package has no sources and skips the check (bin/formsvc.js does not load this file).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = 'dist';
const STAMP = path.join(ROOT, OUT_DIR, 'build-stamp.json');
/** Besides the compiled sources: the files that shape the build and the manifest. */
const ALSO = ['package.json', 'scripts/build.mjs', 'scripts/patch-postgres.mjs'];

const sha256 = (file) =>
  createHash('sha256')
    .update(fs.readFileSync(path.join(ROOT, file)))
    .digest('hex');

/** Records the inputs of the build just written (paths relative to the project). */
export function stampInputs(inputs) {
  const files = [...new Set([...inputs, ...ALSO])].sort();
  const stamp = { built_at: Date.now(), files: Object.fromEntries(files.map((f) => [f, sha256(f)])) };
  fs.writeFileSync(STAMP, `${JSON.stringify(stamp, null, 1)}\n`);
}

/** Why dist/ cannot be run as built, or null when it matches the sources. */
export function staleReason() {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return `there is no build in ${OUT_DIR}/`;
  }
  for (const [file, hash] of Object.entries(stamp.files)) {
    let mtime;
    try {
      mtime = fs.statSync(path.join(ROOT, file)).mtimeMs;
    } catch {
      return `${file} is gone since the last build`;
    }
    if (mtime > stamp.built_at && sha256(file) !== hash) return `${file} changed since the last build`;
  }
  return null;
}

/** Exits with one line when dist/ is missing or stale. */
export function requireBuild(who) {
  const reason = staleReason();
  if (reason === null) return;
  process.stderr.write(`${who}: ${reason}; run \`npm run build\` (or keep \`npm run dev\` running)\n`);
  process.exit(1);
}
