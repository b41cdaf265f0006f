import { defineConfig } from 'vitest/config';

// Every test talks to 127.0.0.1 only, and Node parses NODE_EXTRA_CA_CERTS's bundle at every
// start, TLS or not: about 0.1 s of CPU per process on the CI box, where a run starts ~700 Node
// processes (fixture servers, `serve`, the CLI). Dropped before the workers fork, so neither they
// nor anything they start pays for it.
delete process.env.NODE_EXTRA_CA_CERTS;

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
    // Test files share a worker's module cache: importing the daemon's modules again for every file
    // cost about 40 s of a 136 s run. Nothing here relies on a fresh module: no vi.mock, env and
    // timer changes are undone by the test that made them, and the warning trap is per worker.
    isolate: false,
  },
});
