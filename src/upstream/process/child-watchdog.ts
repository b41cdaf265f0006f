import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { ChildRecord } from '../../store/child-records.js';
import { waitFor } from '../../util/wait-for.js';

/**
 * The daemon's side of the child watchdog (src/watchdog.ts): started with the first recorded
 * stdio child, told of every child that starts and ends, and let go (its pipe ended) once none
 * is left, so that it exits by itself. Neither the process handle nor the pipe keeps the daemon's
 * event loop alive; a clean shutdown ends it with `end()` and waits for that (issue #35 item 5:
 * left to exit by itself, a watchdog still booting on a busy box outlived its daemon by seconds).
 * It is spawned in a session of its own (a
 * terminal's Ctrl-C or hang-up must not take it down with the daemon it watches). It inherits no
 * descriptor but its stdin: the listening socket must not outlive the daemon in it, and the
 * write end of its pipe is close-on-exec, so the stdio children never hold it open.
 */

/**
 * The watchdog script as built next to the daemon's code: `dist/watchdog.js` beside the CLI
 * bundle, whose code sits in `dist/cli.js` and `dist/chunks/`, and beside the compiled library,
 * where this module is `dist/mcp/process/child-watchdog.js`. Run from the TypeScript sources
 * (the test runner) there is none: the exit hook and the next start's reaper are all there is.
 */
export function findWatchdogScript(moduleUrl: string, exists: (path: string) => boolean = existsSync): string | undefined {
  for (const relative of ['./watchdog.js', '../watchdog.js', '../../watchdog.js']) {
    const path = fileURLToPath(new URL(relative, moduleUrl));
    if (exists(path)) return path;
  }
  return undefined;
}

export class ChildWatchdog {
  readonly #records = new Map<number, ChildRecord>();
  /** Looked for when the first watchdog starts; null until then. */
  #script: string | undefined | null;
  #process: ChildProcess | undefined;
  /** Watchdogs let go (their pipe ended) that have not exited yet. */
  readonly #released = new Set<ChildProcess>();

  /** @param script the watchdog to run @default the one built next to this module */
  constructor(script?: string) {
    this.#script = script ?? null;
  }

  /** A child just spawned: recorded by the watchdog, which is started if it is not running. */
  add(record: ChildRecord): void {
    this.#records.set(record.pid, record);
    if (this.#process) this.#send(`+${JSON.stringify(record)}`);
    else this.#start();
  }

  /** A child and all it started are gone; with the last one, the watchdog is let go. */
  remove(pid: number): void {
    if (!this.#records.delete(pid)) return;
    if (!this.#process) {
      if (this.#records.size > 0) this.#start();
      return;
    }
    this.#send(`-${pid}`);
    if (this.#records.size > 0) return;
    this.#released.add(this.#process);
    this.#process.stdin?.end();
    this.#process = undefined;
  }

  /**
   * Shutdown: once no child is recorded, every watchdog let go is ended and waited for, so that
   * none outlives the daemon's exit. Killed rather than awaited: with no record it has nothing
   * left to do, and one still booting would take its whole boot to notice its pipe ended. With
   * children still recorded (another daemon of this process has servers running) the watchdog
   * keeps watching. Resolves within `timeoutMs` whatever happens.
   */
  async end(timeoutMs = END_TIMEOUT_MS): Promise<void> {
    if (this.#records.size > 0) return;
    await Promise.all([...this.#released].map((child) => endProcess(child, timeoutMs)));
  }

  #start(): void {
    if (this.#script === null) this.#script = findWatchdogScript(import.meta.url);
    if (this.#script === undefined) return;
    let child: ChildProcess;
    try {
      // No env and no execArgv: NODE_OPTIONS or an --inspect port are the daemon's, not its.
      child = spawn(process.execPath, [this.#script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: {}, windowsHide: true });
    } catch {
      return;
    }
    this.#process = child;
    child.unref();
    const stdin = child.stdin as Socket | null;
    stdin?.unref();
    // A watchdog that died (or never started) is replaced at the next change, with every record.
    const lost = (): void => {
      if (this.#process === child) this.#process = undefined;
    };
    child.once('exit', () => this.#released.delete(child));
    child.once('error', lost);
    child.once('exit', lost);
    stdin?.on('error', lost);
    for (const record of this.#records.values()) this.#send(`+${JSON.stringify(record)}`);
  }

  #send(line: string): void {
    const stdin = this.#process?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(`${line}\n`);
  }
}

/** How long `end()` waits for a killed watchdog's exit to be reported. */
const END_TIMEOUT_MS = 2_000;

/** SIGKILL, then wait for the exit (reaped by Node, so no zombie is left either). */
async function endProcess(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Held while waiting: an unref'd child would not keep the daemon's event loop alive until its exit.
  child.ref();
  const exited = once(child, 'exit').catch(() => undefined);
  try {
    // Not reaped yet (no 'exit' so far), so the pid is still this process's, a zombie at worst.
    child.kill('SIGKILL');
    await waitFor(exited, { deadlineMs: timeoutMs });
  } finally {
    child.unref();
  }
}
