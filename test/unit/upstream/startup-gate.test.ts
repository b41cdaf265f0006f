import { describe, expect, it } from 'vitest';
import type { ErrorInfo } from '../../../src/errors.js';
import type { ConnectTask, UpstreamIdentity } from '../../../src/upstream/server/upstream-host.js';
import { passStartupGate } from '../../../src/upstream/startup-gate.js';
import { deferred } from '../../../src/util/deferred.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const GATE_MS = 250;

interface Task extends ConnectTask {
  /** Sets the outcome and settles `done`, as an upstream does when its attempt is applied. */
  finish(error?: ErrorInfo): void;
}

function task(name: string): Task {
  const done = deferred<void>();
  const made: Task = {
    upstream: { name } as UpstreamIdentity,
    done: done.promise,
    finish(error) {
      made.outcome = error ? { ok: false, error } : { ok: true };
      done.resolve();
    },
  };
  return made;
}

/** A gate over `tasks` on a manual clock; `served` lists the tasks offered to the cache, in order. */
function gate(tasks: Task[], cached: ReadonlySet<string>, cacheRead: Promise<unknown> = Promise.resolve()) {
  const clock = new ManualClock(0);
  const served: string[] = [];
  const state = { passed: false };
  void passStartupGate(tasks, {
    gateMs: GATE_MS,
    clock,
    serveCached: (t) => {
      served.push(t.upstream.name);
      return cached.has(t.upstream.name);
    },
    cacheRead,
  }).then(() => {
    state.passed = true;
  });
  return { clock, served, state };
}

/** Lets every reaction queued so far run (no time passes on the manual clock). */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('passStartupGate (on the injected clock)', () => {
  it('passes as soon as every task finished, failed ones included, without the cache or the clock', async () => {
    const tasks = [task('a'), task('b')];
    const neverRead = deferred<void>();
    const { clock, served, state } = gate(tasks, new Set(['a', 'b']), neverRead.promise);
    expect(clock.pendingDelays()).toEqual([GATE_MS]);
    tasks[0]!.finish();
    tasks[1]!.finish({ code: 'UPSTREAM_CONNECT_FAILED', message: 'refused' });
    await flush();
    expect(state.passed).toBe(true);
    // No cache read awaited (it never settles), nothing served from it, and the gate's timer is gone.
    expect(served).toEqual([]);
    expect(clock.pendingDelays()).toEqual([]);
  });

  it('holds until gateMs on the clock has passed while a task runs, then serves it from the cache without awaiting it', async () => {
    const tasks = [task('fast'), task('slow')];
    const { clock, served, state } = gate(tasks, new Set(['slow']));
    tasks[0]!.finish();
    clock.advance(GATE_MS - 1);
    await flush();
    expect(state.passed).toBe(false);
    expect(served).toEqual([]);
    clock.advance(1);
    await flush();
    expect(state.passed).toBe(true);
    expect(served).toEqual(['slow']);
    expect(tasks[1]!.outcome).toBeUndefined();
  });

  it('awaits a task the cache cannot serve, and only that one', async () => {
    const tasks = [task('cached'), task('uncached')];
    const { clock, served, state } = gate(tasks, new Set(['cached']));
    clock.advance(GATE_MS);
    await flush();
    expect(served).toEqual(['cached', 'uncached']);
    expect(state.passed).toBe(false);
    tasks[1]!.finish();
    await flush();
    expect(state.passed).toBe(true);
    expect(tasks[0]!.outcome).toBeUndefined();
  });

  it('awaits the cache read once the gate passed with a task running, before offering anything to the cache', async () => {
    const tasks = [task('slow')];
    const read = deferred<void>();
    const { clock, served, state } = gate(tasks, new Set(['slow']), read.promise);
    clock.advance(GATE_MS);
    await flush();
    expect(served).toEqual([]);
    expect(state.passed).toBe(false);
    read.resolve();
    await flush();
    expect(state.passed).toBe(true);
    expect(served).toEqual(['slow']);
  });

  it('does not offer a task that finished while the cache was read: it serves its live tools', async () => {
    const tasks = [task('late'), task('slow')];
    const read = deferred<void>();
    const { clock, served, state } = gate(tasks, new Set(['late', 'slow']), read.promise);
    clock.advance(GATE_MS);
    await flush();
    // Running when the gate passed; done before the cache answered.
    tasks[0]!.finish();
    read.resolve();
    await flush();
    expect(state.passed).toBe(true);
    expect(served).toEqual(['slow']);
  });
});
