import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A process warning fails the test that caused it (test/setup/process-warnings.ts).
    setupFiles: ['test/setup/process-warnings.ts'],
    // Integration tests spawn real child processes; two cores are easily saturated.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
