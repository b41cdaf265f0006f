import { describe, expect, it, onTestFinished } from 'vitest';
import { ScriptRuns, type ScriptSettings } from '../../../../src/gateway/scripts/script-runs.js';
import type { ScriptHost } from '../../../../src/gateway/scripts/script-sandbox.js';
import { deferred } from '../../../../src/util/deferred.js';

/** A host whose calls wait until `release`; `started` resolves at the first call, `aborted` when a call's signal aborts. */
function heldHost() {
  const release = deferred<void>();
  const started = deferred<void>();
  const aborted = deferred<unknown>();
  const host: ScriptHost = {
    tools: [],
    search: async () => [],
    call: async (_name, _args, signal) => {
      signal.addEventListener('abort', () => aborted.resolve(signal.reason), { once: true });
      started.resolve();
      await release.promise;
      return 1;
    },
  };
  return { host, release, started, aborted };
}

const HOLD = 'return await tools.call("x", {})';

/** Script runs whose warm workers are stopped when the test ends. */
function scriptRuns(settings: ScriptSettings, agentSetting: (name: string) => boolean | undefined = () => undefined): ScriptRuns {
  const runs = new ScriptRuns(settings, agentSetting);
  onTestFinished(() => runs.close());
  return runs;
}

describe('script runs: admission, the running list, cancellation (issue #39)', () => {
  it("is off unless codeMode is on, the agent's own setting winning", async () => {
    const runs = scriptRuns({ enabled: false }, (name) => (name === 'yes' ? true : name === 'no' ? false : undefined));
    expect(runs.enabledFor(undefined)).toBe(false);
    expect(runs.enabledFor({ name: 'yes' })).toBe(true);
    expect(scriptRuns({ enabled: true }, (name) => (name === 'no' ? false : undefined)).enabledFor({ name: 'no' })).toBe(false);
    await expect(runs.run('return 1', undefined, { name: 'other' }, 'rest', undefined, () => heldHost().host)).rejects.toMatchObject({ code: 'CODE_MODE_DISABLED' });
  });

  it('refuses past maxRunsPerAgent and maxRuns with SERVER_BUSY, lists the running ones, and admits again once one ends', async () => {
    const runs = scriptRuns({ enabled: true, maxRuns: 2, maxRunsPerAgent: 1 });
    const first = heldHost();
    const running = runs.run(HOLD, undefined, { name: 'a' }, 'mcp', undefined, () => first.host);
    await expect(runs.run(HOLD, undefined, { name: 'a' }, 'mcp', undefined, () => heldHost().host)).rejects.toMatchObject({ code: 'SERVER_BUSY', retryAfterMs: 1000 });
    const second = heldHost();
    const operator = runs.run(HOLD, undefined, undefined, 'rest', undefined, () => second.host);
    await expect(runs.run(HOLD, undefined, { name: 'b' }, 'rest', undefined, () => heldHost().host)).rejects.toMatchObject({ code: 'SERVER_BUSY' });
    await Promise.all([first.started.promise, second.started.promise]);
    expect(runs.list()).toMatchObject([
      { agent: 'a', transport: 'mcp', calls: 1 },
      { transport: 'rest', calls: 1 },
    ]);
    first.release.resolve();
    expect(await running).toMatchObject({ ok: true, value: 1, calls: 1 });
    expect(runs.size).toBe(1);
    second.release.resolve();
    expect((await operator).runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(runs.list()).toEqual([]);
  });

  it('a cancelled run rejects with the reason, aborts its calls in flight, and does not give its worker back', async () => {
    const runs = scriptRuns({ enabled: true });
    const held = heldHost();
    const controller = new AbortController();
    const running = runs.run(HOLD, undefined, undefined, 'rest', controller.signal, () => held.host);
    await held.started.promise;
    const reason = new Error('gave up');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(await held.aborted.promise).toBeInstanceOf(Error);
    expect(runs.size).toBe(0);
    // Stopped from outside, its worker is not given back: the next run starts another.
    expect(runs.workers.idle).toBe(0);
    expect(await runs.run('return 1', undefined, undefined, 'rest', undefined, () => held.host)).toMatchObject({ ok: true, value: 1 });
    expect(runs.workers.started).toBe(2);
  });

  it('takes a shorter timeoutMs than its limit, never a longer one', async () => {
    const runs = scriptRuns({ enabled: true, limits: { timeoutMs: 500 } });
    const outcome = await runs.run('while (true) {}', 60_000, undefined, 'rest', undefined, () => heldHost().host);
    expect(outcome).toMatchObject({ ok: false, error: { code: 'SCRIPT_TIMEOUT' } });
  });
});

describe('warm workers between runs (issue #34: code mode without a worker start per run)', () => {
  it('runs one after another in one worker, each in a fresh context: a global one script sets is not there for the next', async () => {
    const runs = scriptRuns({ enabled: true });
    const host = heldHost().host;
    expect(await runs.run('globalThis.leak = 42; return leak', undefined, undefined, 'rest', undefined, () => host)).toMatchObject({ ok: true, value: 42 });
    expect(await runs.run('return typeof globalThis.leak', undefined, undefined, 'rest', undefined, () => host)).toMatchObject({ ok: true, value: 'undefined' });
    expect(runs.workers.started).toBe(1);
    expect(runs.workers.idle).toBe(1);
  });

  it('objects that fill the capped WebAssembly memory before QuickJS counts its limit: SCRIPT_MEMORY_LIMIT, not "Error: null"; a script that throws null is still its own error', async () => {
    const runs = scriptRuns({ enabled: true, limits: { memoryBytes: 16 * 1024 * 1024 } });
    const host = heldHost().host;
    const bomb = await runs.run('const kept = [];\nfor (let i = 0;; i++) kept.push({ i, s: "x" + i });', undefined, undefined, 'rest', undefined, () => host);
    expect(bomb).toMatchObject({ ok: false, error: { code: 'SCRIPT_MEMORY_LIMIT', message: 'The script ran out of its memory limit' } });
    const thrown = await runs.run('throw null', undefined, undefined, 'rest', undefined, () => host);
    expect(thrown).toMatchObject({ ok: false, error: { code: 'SCRIPT_ERROR', message: 'Error: null' } });
    expect(runs.workers.started).toBe(1);
  });

  it('a script that ran out of memory leaves a worker whose next run has all its memory again', async () => {
    const runs = scriptRuns({ enabled: true, limits: { memoryBytes: 8 * 1024 * 1024 } });
    const host = heldHost().host;
    const bomb = await runs.run('const a = []; while (true) a.push("x".repeat(100000) + a.length);', undefined, undefined, 'rest', undefined, () => host);
    expect(bomb).toMatchObject({ ok: false, error: { code: 'SCRIPT_MEMORY_LIMIT' } });
    // 6 MiB of strings: more than was left to the bomb's runtime, less than a fresh one's limit.
    const fresh = await runs.run('const a = []; for (let i = 0; i < 60; i++) a.push("y".repeat(100000) + i); return a.length', undefined, undefined, 'rest', undefined, () => host);
    expect(fresh).toMatchObject({ ok: true, value: 60 });
    // ArrayBuffers fill the WebAssembly memory itself (QuickJS does not count them): only a new
    // instance, not a new runtime in the old one, has room for the next run's 16 MiB.
    // Held by a global: the run's runtime is dropped, never freed, so they stay in its memory.
    const buffers = await runs.run('globalThis.kept = []; while (true) kept.push(new ArrayBuffer(1 << 20));', undefined, undefined, 'rest', undefined, () => host);
    expect(buffers).toMatchObject({ ok: false });
    const room = await runs.run(
      'const a = []; for (let i = 0; i < 16; i++) a.push(new ArrayBuffer(1 << 20)); return a.length',
      undefined,
      undefined,
      'rest',
      undefined,
      () => host,
    );
    expect(room).toMatchObject({ ok: true, value: 16 });
    expect(runs.workers.started).toBe(1);
  });
});
