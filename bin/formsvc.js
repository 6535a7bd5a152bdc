#!/usr/bin/env node
// The formsvc CLI: the compiled dist/cli (npm run build; `npm ci` builds it in a clone, the package
// ships it). In a clone the build must match the sources: a missing or stale one is refused with
// one line. The installed package has no sources and no such check.
import { existsSync } from 'node:fs';

if (existsSync(new URL('../cli/main.ts', import.meta.url))) {
  const { requireBuild } = await import('../scripts/build-state.mjs');
  requireBuild('formsvc');
}
const { main } = await import('../dist/cli/main.js');
await main(process.argv.slice(2));
