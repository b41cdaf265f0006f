import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { descendantPids, killGroup } from './proc.js';

/**
 * The last resort when the bench dies or is interrupted: every process a benchmark spawned (a
 * daemon, a peer, a reference server) and has not yet seen exit is SIGKILLed together with its
 * descendants and their process groups, so no stdio server outlives the run. Peers run in their
 * own process group (spawned `detached`), where a Ctrl-C at the terminal would not reach them.
 * Temp directories still registered then are removed after the processes are gone.
 */
const live = new Set<ChildProcess>();
const dirs = new Set<string>();

export function track(child: ChildProcess): void {
  live.add(child);
  child.once('close', () => live.delete(child));
}

/** Registers a temp directory for removal at exit; call the returned function once it is removed. */
export function trackDir(dir: string): () => void {
  dirs.add(dir);
  return () => void dirs.delete(dir);
}

function killLive(): void {
  for (const child of live) {
    if (child.pid === undefined) continue;
    // Descendants first: once their parent is gone they are reparented and no longer found.
    for (const pid of descendantPids(child.pid)) killGroup(pid);
    killGroup(child.pid);
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

process.once('exit', killLive);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killLive();
    process.exit(130);
  });
}
