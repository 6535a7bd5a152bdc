/**
 * Writes the pre-made embedded database a fresh DATA_DIR starts from (server/db/pglite-seed.ts):
 * `tsx scripts/pglite-seed.ts [outDir]`, by default into pglite-seed/ beside the migrations, where
 * the server looks for it. `npm ci` (prepare) and `npm pack` run it with --if-missing.
 */

import fs from 'node:fs';
import { MIGRATIONS, SEED_DIR } from '../server/db/client.js';
import { seedFile, writeSeed } from '../server/db/pglite-seed.js';

// --if-missing (the build's step): keep a seed already made for the installed PGlite.
const ifMissing = process.argv.includes('--if-missing');
const outDir = process.argv.slice(2).find((a) => !a.startsWith('--')) ?? SEED_DIR;
if (ifMissing && fs.existsSync(seedFile(outDir))) {
  process.stderr.write(`${seedFile(outDir)} is there already\n`);
  process.exit(0);
}
const started = performance.now();
const file = await writeSeed(outDir, MIGRATIONS);
process.stderr.write(`${file} written in ${Math.round(performance.now() - started)} ms\n`);
