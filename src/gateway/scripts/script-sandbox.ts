import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { ScriptFault, RunData, WorkerIn, WorkerOut } from './script-worker.js';
import type { ScriptWorkers } from './script-workers.js';

/** The sandbox's limits for one run (issue #39 item 2). */
export interface ScriptLimits {
  /** QuickJS heap, bytes. @default 64 MiB */
  memoryBytes: number;
  /** Wall time of the run, ms; inner calls included. @default 30000 */
  timeoutMs: number;
  /** Most characters of `console.log` output kept, and of the value's JSON. @default 100000 */
  maxOutputChars: number;
  /** Most `tools.call`s and `tools.search`es of one run. @default 100 */
  maxCalls: number;
  /** Most host calls of one run in flight at once; the rest wait their turn. @default 8 */
  concurrency: number;
}

export const DEFAULT_SCRIPT_LIMITS: Readonly<ScriptLimits> = { memoryBytes: 64 * 1024 * 1024, timeoutMs: 30_000, maxOutputChars: 100_000, maxCalls: 100, concurrency: 8 };

/** What a script may reach outside the sandbox: each answer a JSON value, each failure a SwitchboardError. */
export interface ScriptHost {
  call(name: string, args: Record<string, unknown> | undefined, signal: AbortSignal): Promise<unknown>;
  search(query: string, signal: AbortSignal): Promise<unknown>;
  tools: RunData['tools'];
}

/** How a run ended. */
export type ScriptOutcome =
  { ok: true; value: unknown; logs: string[]; logsCut: boolean; calls: number } | { ok: false; error: ScriptFault; logs: string[]; logsCut: boolean; calls: number };

// The WebAssembly of the variant the worker uses, resolved from quickjs-emscripten (whose dependency it is).
const WASM_PATH = createRequire(createRequire(import.meta.url).resolve('quickjs-emscripten')).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');

type CompiledModule = NonNullable<RunData['wasmModule']>;
let compiled: Promise<CompiledModule> | undefined;

/**
 * QuickJS's WebAssembly compiled once per daemon and handed to each run's worker (a compiled
 * module is cloned to a worker without compiling again): measured, it is most of a run's start.
 */
function compiledModule(): Promise<CompiledModule> {
  const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledModule> } };
  compiled ??= readFile(WASM_PATH).then((bytes) => wasm.compile(bytes));
  // A failed read or compile is retried by the next run, not remembered.
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}
/**
 * Runs one script in a worker of `workers` with a fresh QuickJS instance, runtime and context, and
 * answers its host calls: at most `maxCalls`, at most `concurrency` at once (the others queue),
 * each aborted when the run ends. The run ends at its deadline (`SCRIPT_TIMEOUT`), when `signal`
 * aborts (its reason is thrown), or when the script returns or throws. The worker is given back
 * only when it said the run is over (the script returned, threw, or was interrupted inside); on
 * every other exit path it is terminated, so a script stuck in a busy loop is stopped even if its
 * interrupt handler were not reached.
 */
export async function runScript(code: string, limits: ScriptLimits, host: ScriptHost, signal: AbortSignal | undefined, workers: ScriptWorkers): Promise<ScriptOutcome> {
  const wasmModule = await compiledModule();
  signal?.throwIfAborted();
  return new Promise<ScriptOutcome>((resolve, reject) => {
    const inner = new AbortController();
    const data: RunData = { wasmModule, code, memoryBytes: limits.memoryBytes, deadline: Date.now() + limits.timeoutMs, maxOutputChars: limits.maxOutputChars, tools: host.tools };
    const worker = workers.take();
    let calls = 0;
    let running = 0;
    const queue: Array<() => void> = [];
    let settled = false;

    const end = (outcome: ScriptOutcome | { thrown: unknown }, reusable = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      inner.abort(new Error('the script ended'));
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (reusable) workers.giveBack(worker);
      else void worker.terminate();
      if ('thrown' in outcome) reject(outcome.thrown);
      else resolve(outcome);
    };
    const failed = (error: ScriptFault): ScriptOutcome => ({ ok: false, error, logs: [], logsCut: false, calls });
    const onAbort = (): void => end({ thrown: signal?.reason });

    const reply = (message: WorkerIn): void => {
      if (!settled) worker.postMessage(message);
    };
    const answer = (id: number, work: () => Promise<unknown>): void => {
      const start = (): void => {
        running++;
        work()
          .then((value) => reply({ type: 'reply', id, json: JSON.stringify(value ?? null) }))
          .catch((err: unknown) => reply({ type: 'reply', id, error: { code: codeOf(err), message: err instanceof Error ? err.message : String(err) } }))
          .finally(() => {
            running--;
            queue.shift()?.();
          });
      };
      if (running < limits.concurrency) start();
      else queue.push(start);
    };

    const onMessage = (message: WorkerOut): void => {
      if (message.type === 'done') {
        end({ ok: true, value: message.value === undefined ? null : JSON.parse(message.value), logs: message.logs, logsCut: message.logsCut, calls }, true);
        return;
      }
      if (message.type === 'failed') {
        end({ ok: false, error: message.error, logs: message.logs, logsCut: message.logsCut, calls }, message.retired !== true);
        return;
      }
      if (++calls > limits.maxCalls) {
        reply({ type: 'reply', id: message.id, error: { code: 'SCRIPT_CALL_LIMIT', message: `A script may make at most ${limits.maxCalls} tool calls and searches` } });
        return;
      }
      if (message.type === 'call') {
        const args = message.args;
        if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
          reply({ type: 'reply', id: message.id, error: { code: 'VALIDATION_FAILED', message: 'tools.call(name, args): args must be an object' } });
          return;
        }
        answer(message.id, () => host.call(message.name, args as Record<string, unknown> | undefined, inner.signal));
      } else answer(message.id, () => host.search(message.query, inner.signal));
    };
    const onError = (err: Error): void => {
      // The worker's own heap ran out (ERR_WORKER_OUT_OF_MEMORY) or it failed to start.
      const code = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'SCRIPT_MEMORY_LIMIT' : 'SCRIPT_ERROR';
      end(failed({ code, message: err.message }));
    };
    const onExit = (): void => end(failed({ code: 'SCRIPT_ERROR', message: 'The sandbox stopped before the script finished' }));
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    // The interrupt handler stops the script at the same deadline; this covers a run waiting on calls.
    const timer = setTimeout(() => end(failed({ code: 'SCRIPT_TIMEOUT', message: `The script ran past its time limit (${limits.timeoutMs} ms)` })), limits.timeoutMs + 50);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      worker.postMessage({ type: 'run', run: data } satisfies WorkerIn);
    } catch (err) {
      end({ thrown: err });
    }
  });
}

/** A host call's failure code: a SwitchboardError's, a tool error's (script-host.ts), else INTERNAL_ERROR. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'INTERNAL_ERROR';
}
