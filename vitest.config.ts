import { defineConfig } from 'vitest/config';
import { tmpfsForTheRun } from './test/helpers/run-tmpdir.js';

// Every test talks to 127.0.0.1 only, and Node parses NODE_EXTRA_CA_CERTS's bundle at every
// start, TLS or not: about 0.1 s of CPU per process on the CI box, where a run starts ~700 Node
// processes (fixture servers, `serve`, the CLI). Dropped before the workers fork, so neither they
// nor anything they start pays for it.
delete process.env.NODE_EXTRA_CA_CERTS;

// The tests' state directories on tmpfs where the box has one, removed when the run ends.
tmpfsForTheRun();

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // A process warning fails the test that caused it (test/setup/process-warnings.ts).
    setupFiles: ['test/setup/process-warnings.ts'],
    // Integration tests spawn real child processes; two cores are easily saturated.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // `expect.poll` gives up after 1 s by default: on a box at load 15 a page or a daemon can take
    // longer than that to show what a poll waits for. A poll still returns as soon as it is met.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // A worker runs ~80 files' daemons, clients and hosted fixtures, allocating fast: with young
    // generations of 32 MiB instead of V8's 16 MiB at most, it scavenges half as often. Measured on
    // the 2-core box, whole suite: GC in the (then two) workers 11.5 → 9.5 s, their CPU 123 → 117 s.
    //
    // And no V8 helper threads (concurrent marking and compiling, parallel scavenges): on a box
    // whose two cores the workers, their children, Chromium and PostgreSQL keep ~97 % busy, a
    // helper thread only takes its turn from another process, and the hand-offs cost. Measured
    // there (stop 67, whole runs under process accounting, the workers' CPU over the rest's):
    // 0.721 (0.708–0.733, 4 runs) with it, 0.753 (0.745–0.799, 5 runs) without: ~4 % of the
    // workers' CPU. Not for children: on `serve` and the fixtures too it was no better (one run).
    //
    // And TurboFan only for code that is really hot: four times V8's interrupt budget
    // (`--interrupt-budget`, 66 KiB of bytecode by default) before a function is considered for
    // optimisation. A worker runs most of a test's code a handful of times, too few for an
    // optimising compile to pay back, and without helper threads it compiles on the worker's own
    // thread; but a loop over a 500 000-character result (the result guard's token estimate) runs
    // 7 times slower without TurboFan at all. Measured as above (stop 69), alternating whole
    // runs: 0.712, 0.655, 0.672, 0.645 (median 0.664) against 0.730, 0.660, 0.733, 0.749 (median
    // 0.732) with no TurboFan at all (`--max-opt=1`, stop 68's choice, itself ~2 % under V8's
    // defaults), each pair lower; eight times the budget: 0.669, 0.719. The daemons the tests
    // spawn (`serve`) keep V8's defaults, as a user's do.
    execArgv: ['--max-semi-space-size=32', '--single-threaded', '--interrupt-budget=270336'],
    // Three workers on the two-core CI box, one more than its cores: a worker spends part of each
    // file waiting (on child processes, timers, sockets), and with two the box stood ~9 % idle
    // during the files. Five alternating pairs of full runs there (stop 57, BENCHMARKS.md): 184 →
    // 172 s (means), CPU ~2 % more. A fourth only added contention. At stop 51 (every file
    // importing the daemon afresh, no fixtures hosted) a third worker was slower; not now.
    maxWorkers: 3,
    // Test files share a worker's module cache: importing the daemon's modules again for every file
    // cost about 40 s of a 136 s run. Nothing here relies on a fresh module: no vi.mock, env and
    // timer changes are undone by the test that made them, and the warning trap is per worker.
    isolate: false,
  },
});
