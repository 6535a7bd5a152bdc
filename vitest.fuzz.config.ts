import { defineConfig } from 'vitest/config';

/** `npm run test:fuzz`: property-based bad-input fuzzing (fuzz/*.fuzz.test.ts); `npm test` never runs these. */
export default defineConfig({
  test: {
    include: ['fuzz/**/*.fuzz.test.ts'],
    // Properties run thousands of requests; they end by run count, never by a clock.
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
