import type { ChildProcess } from 'node:child_process';
import { descendantPids, killGroup } from './proc.js';

/**
 * The last resort when the bench dies or is interrupted: every process a benchmark spawned (a
 * daemon, a peer, a reference server) and has not yet seen exit is SIGKILLed together with its
 * descendants and their process groups, so no stdio server outlives the run. Peers run in their
 * own process group (spawned `detached`), where a Ctrl-C at the terminal would not reach them.
 */
const live = new Set<ChildProcess>();

export function track(child: ChildProcess): void {
  live.add(child);
  child.once('close', () => live.delete(child));
}

function killLive(): void {
  for (const child of live) {
    if (child.pid === undefined) continue;
    // Descendants first: once their parent is gone they are reparented and no longer found.
    for (const pid of descendantPids(child.pid)) killGroup(pid);
    killGroup(child.pid);
  }
}

process.once('exit', killLive);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killLive();
    process.exit(130);
  });
}
