import { spawn, type ChildProcess } from 'node:child_process';
import type { ReadBuffer } from '@modelcontextprotocol/client';
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/client';
import { SwitchboardError } from '../../errors.js';
import { waitFor } from '../../util/wait-for.js';
import { deferred } from '../../util/deferred.js';
import { PROCESS_GROUPS_SUPPORTED, signalGroup, trackGroup, untrackGroup, waitForGroupExit } from '../process/process-group.js';
import { signalProcesses, strayDescendants, waitForProcessesExit } from '../../util/process-tree.js';
import { sdk } from '../sdk.js';

export interface StdioProcessOptions {
  command: string;
  args?: string[];
  /** The child's complete environment: nothing is inherited implicitly. */
  env: Record<string, string>;
  cwd?: string;
  /** Receives the child's stderr as it arrives. */
  onStderr?: (chunk: Buffer) => void;
  /** Largest single message accepted from the server. @default 67108864 (64 MiB) */
  maxMessageBytes?: number;
  /** Time between SIGTERM and SIGKILL. @default 1000 */
  killGraceMs?: number;
  /** Rewrites the command just before the spawn (the sandbox, issue #42); may refuse with SANDBOX_UNAVAILABLE. */
  wrap?: (launch: { command: string; args?: string[] }) => Promise<{ command: string; args?: string[] }>;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 1_000;
const NEWLINE = 0x0a;

/**
 * The SDK's stdio client transport, rebuilt around a process group. `StdioClientTransport` spawns
 * the server in our own group and signals only the child, so a server started through `npx` or
 * `sh -c` leaves its real process running; it also caps a message at 10 MiB and copies a large
 * message quadratically. Framing is still the SDK's (`ReadBuffer` / `serializeMessage`).
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioProcessOptions;
  readonly #readBuffer: ReadBuffer;
  readonly #killGraceMs: number;
  readonly #maxMessageBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #child?: ChildProcess;
  #exitStatus?: ExitStatus;
  #exited = deferred();
  #finished = deferred();
  #isFinished = false;
  #terminating?: Promise<void>;
  #closing?: Promise<void>;
  #failure?: SwitchboardError;
  #exitedByItself = false;

  constructor(options: StdioProcessOptions) {
    this.#options = options;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#readBuffer = new (sdk().ReadBuffer)({ maxBufferSize: this.#maxMessageBytes });
    this.#killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  }

  /** The child's pid once spawned. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * The child's stderr stream once spawned (read by `onStderr`). Also how the SDK tells a stdio
   * transport (`stderr` and `pid`): its era probe then falls back to `initialize` on this same
   * process when a slow server leaves the probe unanswered, and reports a process that died of
   * it instead of reading a timeout as a failure (issue #36 item 3).
   */
  get stderr(): NodeJS.ReadableStream | null {
    return this.#child?.stderr ?? null;
  }

  /** How the child ended, once it has. */
  get exitStatus(): ExitStatus | undefined {
    return this.#exitStatus;
  }

  /** Whether the child exited before anyone asked it to (a crash, not our kill). */
  get exitedByItself(): boolean {
    return this.#exitedByItself;
  }

  /** Why this transport gave up on the server itself (e.g. a message over the size cap), if it did. */
  get failure(): SwitchboardError | undefined {
    return this.#failure;
  }

  /** Whether the child and its pipes are done within `ms`. */
  finishedWithin(ms: number): Promise<boolean> {
    return settlesWithin(this.#finished.promise, ms);
  }

  async start(): Promise<void> {
    if (this.#child) throw new Error('StdioProcessTransport already started');
    const { command, args = [] } = (await this.#options.wrap?.(this.#options)) ?? this.#options;
    await spawnTurn();
    if (this.#closing) throw new Error('StdioProcessTransport closed before it started');
    const { env, cwd } = this.#options;
    const child = spawn(command, args, {
      env,
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: PROCESS_GROUPS_SUPPORTED,
      shell: false,
      windowsHide: true,
    });
    this.#child = child;
    let spawned = false;
    const started = deferred();
    child.on('error', (err) => (spawned ? this.onerror?.(err) : started.reject(err)));
    child.once('spawn', () => {
      spawned = true;
      trackGroup(child.pid as number);
      started.resolve();
    });
    child.once('exit', (code, signal) => this.#onExit({ code, signal }));
    // 'close' comes after 'exit' once every stdio stream has ended, so stderr is complete by then.
    child.once('close', () => this.#finish());
    child.stdout?.on('data', (chunk: Buffer) => this.#onStdout(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.#options.onStderr?.(chunk));
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      stream?.on('error', (err) => this.onerror?.(err));
    }
    try {
      await started.promise;
    } catch (err) {
      this.#finish();
      throw err;
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin?.writable || this.#closing) return Promise.reject(new Error('Not connected'));
    // The write callback doubles as backpressure and reports a pipe that broke under us.
    return new Promise((resolve, reject) => {
      stdin.write(sdk().serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Ends stdin, SIGTERMs the process group, SIGKILLs it after the grace. Idempotent, joinable. */
  close(): Promise<void> {
    return (this.#closing ??= this.#shutdown());
  }

  async #shutdown(): Promise<void> {
    const child = this.#child;
    if (!child?.pid || this.#isFinished) {
      this.#finish();
      return;
    }
    try {
      child.stdin?.end();
    } catch {
      // already broken; the signals below still apply
    }
    await this.#terminateGroup();
    await this.#finished.promise;
  }

  #onExit(status: ExitStatus): void {
    this.#exitStatus = status;
    // Before we asked it to stop — or with a failure code of its own even while we did (the
    // SDK may already be closing a transport whose child it saw fail): not our kill.
    this.#exitedByItself = (!this.#closing && !this.#terminating) || (status.code !== null && status.code !== 0);
    this.#exited.resolve();
    // A child that died on its own may leave helpers behind that also hold our pipes open.
    if (!this.#closing) void this.#terminateGroup();
  }

  #terminateGroup(): Promise<void> {
    return (this.#terminating ??= this.#killGroup());
  }

  async #killGroup(): Promise<void> {
    const child = this.#child as ChildProcess;
    const pgid = child.pid as number;
    // Taken before the first signal: a helper that left the group (setsid) is found through its
    // parent, and that link is gone once the parent dies.
    const strays = strayDescendants(pgid);
    const startedAt = Date.now();
    signalGroup(pgid, 'SIGTERM');
    signalProcesses(strays, 'SIGTERM');
    await settlesWithin(this.#exited.promise, this.#killGraceMs);
    const left = (): number => Math.max(0, this.#killGraceMs - (Date.now() - startedAt));
    if (!(await waitForGroupExit(pgid, left()))) signalGroup(pgid, 'SIGKILL');
    if (!(await waitForProcessesExit(strays, left()))) signalProcesses(strays, 'SIGKILL');
    if (!this.#exitStatus) child.kill('SIGKILL');
    // A process outside the group (it called setsid) may still hold a pipe; don't wait on it forever.
    if (!(await settlesWithin(this.#finished.promise, this.#killGraceMs))) {
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
    }
  }

  #onStdout(chunk: Buffer): void {
    // ReadBuffer concatenates its whole buffer with every chunk it is given, which turns a 10 MB
    // message into gigabytes of copying. Hand it only chunks that complete a line, joined once.
    if (chunk.indexOf(NEWLINE) === -1) {
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      if (this.#pendingBytes > this.#maxMessageBytes) this.#fail(this.#tooLarge());
      return;
    }
    const data = this.#pending.length > 0 ? Buffer.concat([...this.#pending, chunk]) : chunk;
    this.#pending = [];
    this.#pendingBytes = 0;
    try {
      this.#readBuffer.append(data);
    } catch {
      // ReadBuffer refuses a buffer over its cap: one line too large to be a message we take.
      this.#fail(this.#tooLarge());
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#readBuffer.readMessage();
      } catch (err) {
        // ReadBuffer has already skipped the bad line; keep reading the next ones.
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      // The SDK handles a notification one microtask after it arrives but a response at once,
      // dropping the request's progress handler with it: progress read in the same chunk as its
      // result would be lost. A response one microtask later keeps the order the server sent.
      if (isResponse(message)) queueMicrotask(() => this.onmessage?.(message));
      else this.onmessage?.(message);
    }
  }

  #tooLarge(): SwitchboardError {
    const mib = Math.round(this.#maxMessageBytes / (1024 * 1024));
    return new SwitchboardError('UPSTREAM_MESSAGE_TOO_LARGE', `sent a message over the ${mib} MiB limit`);
  }

  /** An unreadable stream: remember why, report it and close, as the SDK's transport does. */
  #fail(err: SwitchboardError): void {
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#failure ??= err;
    this.onerror?.(err);
    void this.close();
  }

  #finish(): void {
    if (this.#isFinished) return;
    this.#isFinished = true;
    const pid = this.#child?.pid;
    // Untracked (and its record removed) once the teardown is over, not when the pipes close:
    // the group's other members and strays get up to the grace to go.
    const untrack = (): void => untrackGroup(pid as number);
    if (pid) void Promise.resolve(this.#terminating).then(untrack, untrack);
    this.#readBuffer.clear();
    this.#finished.resolve();
    this.onclose?.();
  }
}

let lastSpawnTurn: Promise<void> = Promise.resolve();

/**
 * Resolves when it is this caller's turn to spawn: at most one spawn per event-loop turn.
 * `spawn()` blocks the event loop until the child has exec'd — a few ms on an idle machine, but
 * 50–200 ms each on a busy 2-core box while the children spawned before are still booting. Fifty
 * servers spawned from one chain of microtasks held every timer (the startup gate's among them)
 * and every HTTP request for up to 10 s; taking turns lets them run between two spawns.
 */
function spawnTurn(): Promise<void> {
  const turn = lastSpawnTurn.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  lastSpawnTurn = turn;
  return turn;
}

/** Whether `promise` settled within `ms`; the timer is cleared either way. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return waitFor(
    promise.then(() => true),
    { deadlineMs: ms, onDeadline: () => false },
  );
}

function isResponse(message: JSONRPCMessage): boolean {
  return 'id' in message && !('method' in message);
}
