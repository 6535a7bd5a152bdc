import { execFileSync } from 'node:child_process';
import { staleReason } from '../../scripts/build-state.mjs';

/**
 * vitest globalSetup: the tests that start the server or the CLI as a user does run the compiled
 * dist/ (as `npm start` and the bin do), so build it first when it is missing or older than the sources.
 */
export default function setup(): void {
  const reason = staleReason();
  if (reason === null) return;
  process.stderr.write(`test setup: ${reason}; building dist/ (npm run build)\n`);
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
