import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { scriptWorkerMain, type WorkerData } from './script-worker.js';

// Resolved here, where module resolution works: the worker is an eval worker and resolves nothing.
const QUICKJS_URL = createRequire(import.meta.url).resolve('quickjs-emscripten');
// A transpiler that keeps function names (tsx, esbuild's keepNames) calls its `__name` helper inside the function.
const WORKER_SOURCE = `var __name = (f) => f;\n(${String(scriptWorkerMain)})(require)`;

/** A code-mode worker thread, loaded and waiting for a run. */
export function startScriptWorker(): Worker {
  const workerData: WorkerData = { quickjs: QUICKJS_URL };
  // The QuickJS heap is WebAssembly memory; the worker's own V8 heap holds only the glue.
  return new Worker(WORKER_SOURCE, { eval: true, workerData, resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 } });
}

export interface ScriptWorkersOptions {
  /** Workers kept waiting between runs; more given back are stopped. @default 2 */
  maxIdle?: number;
  /** How long a worker waits for its next run before it is stopped. @default 30000 */
  idleMs?: number;
  /** Makes a worker. @default startScriptWorker */
  start?: () => Worker;
}

interface Idle {
  worker: Worker;
  timer: NodeJS.Timeout;
  onExit: () => void;
}

/**
 * Code mode's worker threads, kept warm between runs (issue #34's leaner hot path, issue #39's
 * sandbox). Starting a worker (a Node environment, quickjs-emscripten loaded) was ~100 ms of CPU
 * and ~80 ms of a run's latency; a run now takes one that finished its last run cleanly, and
 * still gets a fresh WebAssembly instance, runtime and context (script-worker.ts). A worker that
 * was stopped mid-run (deadline, cancellation, its own heap) is never given back. An idle worker
 * does not hold the process open, and is stopped after `idleMs` so an idle daemon keeps none.
 */
export class ScriptWorkers {
  readonly #idle: Idle[] = [];
  readonly #maxIdle: number;
  readonly #idleMs: number;
  readonly #start: () => Worker;
  #started = 0;
  #closed = false;

  constructor(options: ScriptWorkersOptions = {}) {
    this.#maxIdle = options.maxIdle ?? 2;
    this.#idleMs = options.idleMs ?? 30_000;
    this.#start = options.start ?? startScriptWorker;
  }

  /** Workers started so far. */
  get started(): number {
    return this.#started;
  }

  /** Workers waiting for a run now. */
  get idle(): number {
    return this.#idle.length;
  }

  /** A waiting worker, or a new one: the caller's until it gives it back or terminates it. */
  take(): Worker {
    const idle = this.#idle.pop();
    if (idle) {
      unwatch(idle);
      idle.worker.ref();
      return idle.worker;
    }
    this.#started++;
    const worker = this.#start();
    // A run listens for its worker's errors while it runs; one that comes after (the worker dying
    // while it waits, or as it is terminated) must not be an unhandled 'error' in the daemon. Its
    // 'exit' follows, and takes it out of the pool.
    worker.on('error', () => undefined);
    return worker;
  }

  /** A worker whose run ended cleanly: kept for the next run, or stopped when enough wait already. */
  giveBack(worker: Worker): void {
    if (this.#closed || this.#idle.length >= this.#maxIdle) {
      void worker.terminate();
      return;
    }
    const idle: Idle = {
      worker,
      timer: setTimeout(() => this.#retire(idle, true), this.#idleMs).unref(),
      onExit: () => this.#retire(idle, false),
    };
    worker.once('exit', idle.onExit);
    worker.unref();
    this.#idle.push(idle);
  }

  /** Stops the waiting workers; from now on every worker given back is stopped. */
  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle.splice(0);
    await Promise.all(
      idle.map((entry) => {
        unwatch(entry);
        return entry.worker.terminate();
      }),
    );
  }

  #retire(idle: Idle, terminate: boolean): void {
    const at = this.#idle.indexOf(idle);
    if (at >= 0) this.#idle.splice(at, 1);
    unwatch(idle);
    if (terminate) void idle.worker.terminate();
  }
}

/** Ends what watched a waiting worker (its idle timer, its exit listener): it leaves the pool. */
function unwatch(idle: Idle): void {
  clearTimeout(idle.timer);
  idle.worker.off('exit', idle.onExit);
}
