import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Spawned servers and CLIs run dist/: built here when stale.
    globalSetup: ['test/helpers/build.ts'],
    pool: 'forks',
    maxWorkers: 2,
  },
});
