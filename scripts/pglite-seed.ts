/**
 * Writes the pre-made embedded database a fresh DATA_DIR starts from (server/db/pglite-seed.ts):
 * `tsx scripts/pglite-seed.ts [outDir]`, by default into pglite-seed/ beside the migrations, where
 * the server looks for it. Run it when building the package, after the migrations are in place.
 */
import { MIGRATIONS, SEED_DIR } from '../server/db/client.js';
import { writeSeed } from '../server/db/pglite-seed.js';

const outDir = process.argv[2] ?? SEED_DIR;
const started = performance.now();
const file = await writeSeed(outDir, MIGRATIONS);
process.stdout.write(`${file} written in ${Math.round(performance.now() - started)} ms\n`);
