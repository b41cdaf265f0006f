/**
 * The inside of a code-mode run (issue #39): QuickJS compiled to WebAssembly, in a worker thread
 * of its own. A busy loop in QuickJS holds the thread it runs on until the interrupt handler stops
 * it — measured: `while(true){}` under a 2 s deadline on the main thread let no 10 ms timer fire
 * for 2 s — so the interpreter never runs on the daemon's event loop.
 *
 * `scriptWorkerMain` is handed to the worker as its source (`String(scriptWorkerMain)`, an eval
 * worker): it must not close over anything of this module, so it imports what it needs itself
 * and its types are the only things it shares. The messages it speaks are `WorkerIn`/`WorkerOut`.
 */

/** What the worker is started with: what it loads once and keeps for every run it is given. */
export interface WorkerData {
  /** `quickjs-emscripten`'s CommonJS entry, resolved by the daemon (an eval worker resolves from the working directory). */
  quickjs: string;
}

/** One run: the script, its limits and the caller's tools. */
export interface RunData {
  /** QuickJS's WebAssembly, compiled once by the daemon. @default compiled in the worker */
  wasmModule?: NonNullable<Parameters<typeof import('quickjs-emscripten').newVariant>[1]>['wasmModule'];
  code: string;
  /** QuickJS heap limit, bytes. */
  memoryBytes: number;
  /** Epoch ms when the interrupt handler stops the script. */
  deadline: number;
  /** Most characters of `console.log` output kept, and of the returned value's JSON. */
  maxOutputChars: number;
  /** `tools.list()`: the names and descriptions of the caller's view. */
  tools: Array<{ name: string; description?: string }>;
}

/**
 * From the worker: a host call to make, or the run's end. After `done` or `failed` the worker
 * waits for its next run, unless `retired` says it is stopping (a fault of the sandbox itself).
 */
export type WorkerOut =
  | { type: 'call'; id: number; name: string; args: unknown }
  | { type: 'search'; id: number; query: string }
  | { type: 'done'; value: string | undefined; logs: string[]; logsCut: boolean }
  | { type: 'failed'; error: ScriptFault; logs: string[]; logsCut: boolean; retired?: true };

/** To the worker: a run to make, or the answer of a host call (a JSON text), or its failure. */
export type WorkerIn = { type: 'run'; run: RunData } | { type: 'reply'; id: number; json: string } | { type: 'reply'; id: number; error: { code: string; message: string } };

type Reply = Extract<WorkerIn, { type: 'reply' }>;

/** How a script failed, as the agent is told. */
export interface ScriptFault {
  /** `SCRIPT_ERROR` (thrown or a syntax error), `SCRIPT_MEMORY_LIMIT`, `SCRIPT_TIMEOUT`, `SCRIPT_OUTPUT_TOO_LARGE`. */
  code: string;
  message: string;
  /** The line of the script the error points at (1-based), when QuickJS says. */
  line?: number;
}

/**
 * The worker's whole program. Runs in the worker only; see the module comment. `load` is the
 * worker's CommonJS `require`, handed in as an argument: bundlers and test runners rewrite a
 * `require` or `import()` written here into helpers that exist only in the daemon's module.
 *
 * A worker makes one run at a time and then waits for the next (script-workers.ts keeps it warm):
 * each run gets a WebAssembly instance of its own — fresh linear memory, a fresh QuickJS runtime
 * and context — so nothing a script leaves behind (globals, heap, a corrupted interpreter) is
 * there for the next one; only this glue and the loaded quickjs-emscripten are kept.
 */
export function scriptWorkerMain(load: (id: string) => unknown): void {
  const { parentPort, workerData } = load('node:worker_threads') as typeof import('node:worker_threads');
  const port = parentPort!;
  const post = (message: WorkerOut): void => port.postMessage(message);
  const quickjs = load((workerData as WorkerData).quickjs) as typeof import('quickjs-emscripten');
  // Host-call ids count across the worker's runs: a late reply to a run that ended can never be taken for the next run's.
  let nextId = 0;
  const replyTo = new Map<number, (reply: Reply) => void>();

  async function run(data: RunData): Promise<WorkerOut> {
    const logs: string[] = [];
    let logChars = 0;
    let logsCut = false;
    // The QuickJS limit does not count ArrayBuffers (measured: 2042 × 1 MiB Uint8Array under a 64 MiB
    // limit, the WebAssembly memory grown to 2 GiB); a capped memory bounds everything the run allocates.
    // Headroom beyond the QuickJS heap limit: the interpreter's own state and ArrayBuffers (32 MiB).
    const maximum = Math.ceil((data.memoryBytes + 32 * 1024 * 1024) / 65536);
    // The global exists in every Node; the project's type libraries declare only its types.
    type Options = NonNullable<Parameters<typeof quickjs.newVariant>[1]>;
    type WasmMemory = Extract<NonNullable<Options['wasmMemory']>, { buffer: ArrayBuffer }>;
    const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: new (size: { initial: number; maximum: number }) => WasmMemory } }).WebAssembly;
    const memory = new Memory({ initial: Math.min(256, maximum), maximum });
    const variant = quickjs.newVariant(quickjs.RELEASE_SYNC, { wasmMemory: memory, ...(data.wasmModule ? { wasmModule: data.wasmModule } : {}) });
    const module = await quickjs.newQuickJSWASMModule(variant);
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(data.memoryBytes);
    runtime.setMaxStackSize(1024 * 1024);
    runtime.setInterruptHandler(() => Date.now() > data.deadline);
    const vm = runtime.newContext();
    const mine = new Set<number>();

    // The script is the body of an async function: one line above it, so its lines are ours minus one.
    const lineOf = (stack: unknown): number | undefined => {
      const match = typeof stack === 'string' ? /script\.js:(\d+)/.exec(stack) : null;
      return match ? Math.max(1, Number(match[1]) - 1) : undefined;
    };
    const faultOf = (dumped: unknown): ScriptFault => {
      const error = (typeof dumped === 'object' && dumped !== null ? dumped : { message: String(dumped) }) as {
        name?: string;
        message?: string;
        stack?: string;
        lineNumber?: number;
      };
      const message = `${error.name ?? 'Error'}: ${error.message ?? String(dumped)}`;
      const line = lineOf(error.stack) ?? (typeof error.lineNumber === 'number' ? Math.max(1, error.lineNumber - 1) : undefined);
      let code = 'SCRIPT_ERROR';
      if (error.message === 'interrupted') code = 'SCRIPT_TIMEOUT';
      else if (error.message === 'out of memory' || /out of memory/i.test(error.message ?? '')) code = 'SCRIPT_MEMORY_LIMIT';
      // Objects can fill the capped WebAssembly memory before QuickJS's own count reaches its limit
      // (its allocator's overhead is not counted); QuickJS then has no room for its "out of memory"
      // error either and throws null (measured: 8 and 16 MiB limits, the memory at its maximum).
      else if (dumped === null && memory.buffer.byteLength >= maximum * 65536) code = 'SCRIPT_MEMORY_LIMIT';
      return {
        code,
        message: code === 'SCRIPT_TIMEOUT' ? 'The script ran past its time limit' : code === 'SCRIPT_MEMORY_LIMIT' ? 'The script ran out of its memory limit' : message,
        ...(line !== undefined ? { line } : {}),
      };
    };

    const host = (send: (id: number) => WorkerOut) => {
      const id = nextId++;
      const promise = vm.newPromise();
      mine.add(id);
      replyTo.set(id, (message) => {
        if ('json' in message) {
          const parsed = vm.evalCode(`(${message.json})`);
          if (parsed.error) promise.reject(parsed.error);
          else promise.resolve(parsed.value);
          (parsed.error ?? parsed.value).dispose();
        } else {
          const error = vm.newError({ name: 'ToolError', message: message.error.message });
          vm.setProp(error, 'code', vm.newString(message.error.code));
          promise.reject(error);
          error.dispose();
        }
        promise.dispose();
      });
      post(send(id));
      void promise.settled.then(() => runtime.executePendingJobs());
      return promise.handle;
    };

    const tools = vm.newObject();
    vm.newFunction('call', (name, args) =>
      host((id) => ({ type: 'call', id, name: vm.typeof(name) === 'string' ? vm.getString(name) : '', args: args === undefined ? undefined : (vm.dump(args) as unknown) })),
    ).consume((fn) => vm.setProp(tools, 'call', fn));
    vm.newFunction('search', (query) => host((id) => ({ type: 'search', id, query: vm.typeof(query) === 'string' ? vm.getString(query) : '' }))).consume((fn) =>
      vm.setProp(tools, 'search', fn),
    );
    vm.newFunction('list', () => {
      const parsed = vm.evalCode(`(${JSON.stringify(data.tools)})`);
      return parsed.error ?? parsed.value;
    }).consume((fn) => vm.setProp(tools, 'list', fn));
    vm.setProp(vm.global, 'tools', tools);
    tools.dispose();
    const consoleObject = vm.newObject();
    vm.newFunction('log', (...args) => {
      const line = args.map((arg) => (vm.typeof(arg) === 'string' ? vm.getString(arg) : (JSON.stringify(vm.dump(arg)) ?? 'undefined'))).join(' ');
      if (logsCut) return;
      if (logChars + line.length > data.maxOutputChars) {
        logsCut = true;
        return;
      }
      logChars += line.length;
      logs.push(line);
    }).consume((fn) => {
      vm.setProp(consoleObject, 'log', fn);
      vm.setProp(consoleObject, 'error', fn);
    });
    vm.setProp(vm.global, 'console', consoleObject);
    consoleObject.dispose();

    try {
      const evaluated = vm.evalCode(`(async () => {\n${data.code}\n})().then((value) => JSON.stringify(value))`, 'script.js');
      if (evaluated.error) {
        const fault = faultOf(vm.dump(evaluated.error));
        evaluated.error.dispose();
        return { type: 'failed', error: fault, logs, logsCut };
      }
      const resolved = vm.resolvePromise(evaluated.value);
      evaluated.value.dispose();
      runtime.executePendingJobs();
      const outcome = await resolved;
      if (outcome.error) {
        const fault = faultOf(vm.dump(outcome.error));
        outcome.error.dispose();
        return { type: 'failed', error: fault, logs, logsCut };
      }
      const json = vm.typeof(outcome.value) === 'string' ? vm.getString(outcome.value) : undefined;
      outcome.value.dispose();
      if (json !== undefined && json.length > data.maxOutputChars) {
        return {
          type: 'failed',
          error: { code: 'SCRIPT_OUTPUT_TOO_LARGE', message: `The script's value is ${json.length} characters as JSON, over the limit of ${data.maxOutputChars}` },
          logs,
          logsCut,
        };
      }
      return { type: 'done', value: json, logs, logsCut };
    } finally {
      // Calls still unanswered belong to a run that is over; the instance is dropped, not disposed
      // (QuickJS asserts on a runtime freed with objects alive, and the memory goes with it anyway).
      for (const id of mine) replyTo.delete(id);
    }
  }

  port.on('message', (message: WorkerIn) => {
    if (message.type === 'run') {
      run(message.run).then(post, (err: unknown) => {
        // A fault of the sandbox itself (the interpreter's memory exhausted outside the script, say):
        // this worker is not trusted with another run.
        post({ type: 'failed', error: { code: 'SCRIPT_ERROR', message: err instanceof Error ? err.message : String(err) }, logs: [], logsCut: false, retired: true });
        port.close();
      });
      return;
    }
    const settle = replyTo.get(message.id);
    replyTo.delete(message.id);
    settle?.(message);
  });
}
