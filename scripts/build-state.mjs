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
const stampFile = (root) => path.join(root, OUT_DIR, 'build-stamp.json');
const sha256 = (root, file) =>
  createHash('sha256')
    .update(fs.readFileSync(path.join(root, file)))
    .digest('hex');

/** Records the inputs of the build just written (paths relative to root). */
export function stampInputs(inputs, root = ROOT) {
  const files = [...new Set(inputs)].sort();
  const stamp = { built_at: Date.now(), files: Object.fromEntries(files.map((f) => [f, sha256(root, f)])) };
  fs.writeFileSync(stampFile(root), `${JSON.stringify(stamp, null, 1)}\n`);
}

/** Why dist/ cannot be run as built, or null when it matches the sources. */
export function staleReason(root = ROOT) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(stampFile(root), 'utf8'));
  } catch {
    return `there is no build in ${OUT_DIR}/`;
  }
  for (const [file, hash] of Object.entries(stamp.files)) {
    let mtime;
    try {
      mtime = fs.statSync(path.join(root, file)).mtimeMs;
    } catch {
      return `${file} is gone since the last build`;
    }
    if (mtime > stamp.built_at && sha256(root, file) !== hash) return `${file} changed since the last build`;
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
