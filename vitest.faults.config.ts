import { defineConfig } from 'vitest/config';

/**
 * Fault tests (`npm run test:faults`): real server processes on the machine's PostgreSQL, killed,
 * cut off and slowed down. One file at a time (they start processes and load the machine); each
 * test bounds itself well under its timeout. `npm test` does not include them.
 */
export default defineConfig({
  test: {
    include: ['faults/**/*.fault.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // Spawned servers and CLIs run dist/: built here when stale.
    globalSetup: ['test/helpers/build.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
