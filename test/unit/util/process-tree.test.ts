import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseStat, readSpawned, strayDescendants, type ProcReader, type ProcStat } from '../../../src/util/process-tree.js';

/** A /proc/<pid>/stat line with the fields strayDescendants reads (the rest zero). */
function statLine(pid: number, comm: string, state: string, ppid: number, pgid: number, startTime: number): string {
  const middle = Array.from({ length: 16 }, () => '0').join(' '); // fields 6 … 21
  return `${pid} (${comm}) ${state} ${ppid} ${pgid} ${middle} ${startTime} 0 0\n`;
}

const p = (pid: number, ppid: number, pgid: number, state = 'S'): ProcStat => ({ pid, ppid, pgid, state, startTime: pid * 10 });

describe('parseStat', () => {
  it('reads ppid, pgid, state and the start time (field 22), whatever the command name holds', () => {
    const line = statLine(42, 'a) (weird name', 'S', 7, 42, 123456);
    expect(parseStat(42, line)).toEqual({ pid: 42, ppid: 7, pgid: 42, state: 'S', startTime: 123456 });
  });

  it('refuses a line it cannot read', () => {
    expect(parseStat(1, 'garbage')).toBeUndefined();
    expect(parseStat(1, '1 (x) S 0')).toBeUndefined();
  });
});

describe('strayDescendants', () => {
  it('finds descendants that left the group (setsid), and theirs, but not the group itself', () => {
    const processes = [
      p(1, 0, 1),
      p(100, 1, 100), // the server, leader of its group
      p(101, 100, 100), // a wrapper's child, still in the group
      p(200, 101, 200), // a helper that called setsid
      p(201, 200, 200), // … and its child
      p(300, 1, 300), // a stranger
    ];
    expect(strayDescendants(100, processes).map((s) => s.pid)).toEqual([200, 201]);
  });

  it('still finds them through a live member when the leader has died', () => {
    const processes = [p(1, 0, 1), p(101, 1, 100), p(200, 101, 200)];
    expect(strayDescendants(100, processes)).toEqual([{ pid: 200, startTime: 2000 }]);
  });

  it('leaves out zombies, and finds nothing for a group without members', () => {
    const processes = [p(100, 1, 100), p(200, 100, 200, 'Z')];
    expect(strayDescendants(100, processes)).toEqual([]);
    expect(strayDescendants(555, processes)).toEqual([]);
  });
});

/**
 * /proc as a process inside execve shows it, then as it shows the new program: the stat as given,
 * the command line empty for the first `emptyReads` reads. Counts the reads.
 */
function execing(stat: ProcStat | undefined, emptyReads: number, cmdline = ['sleep', '1000']): ProcReader & { reads: number } {
  const proc = {
    reads: 0,
    stat: () => stat,
    cmdline: () => (proc.reads++ < emptyReads ? [] : cmdline),
  };
  return proc;
}

describe('readSpawned', () => {
  // The kernel closes the close-on-exec pipe spawn() waits on before it writes the new program's
  // arguments: seen as an empty /proc/<pid>/cmdline about once in 3 000 spawns under load (the
  // child-watchdog test's "cannot describe"), a window no real process opens on demand.
  it('waits out a child still inside execve: an empty command line, then the new one', () => {
    const proc = execing(p(300, 1, 300), 3);
    expect(readSpawned(300, proc)).toEqual({ stat: p(300, 1, 300), cmdline: ['sleep', '1000'] });
    expect(proc.reads).toBe(4);
  });

  it('answers nothing for a process gone or finished, without waiting', () => {
    const zombie = execing(p(300, 1, 300, 'Z'), 1000);
    expect(readSpawned(300, zombie)).toBeUndefined();
    expect(zombie.reads).toBe(0);
    expect(readSpawned(300, execing(undefined, 0))).toBeUndefined();
  });

  it('gives up on a command line that stays empty (a kernel thread) after the wait', () => {
    const proc = execing(p(2, 0, 0), Infinity);
    expect(readSpawned(2, proc, 5)).toBeUndefined();
    expect(proc.reads).toBe(6);
  });

  it.skipIf(process.platform !== 'linux')('reads a real child its command line and start time', () => {
    const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
    onTestFinished(() => void child.kill('SIGKILL'));
    const spawned = readSpawned(child.pid as number);
    expect(spawned?.cmdline).toEqual(['sleep', '1000']);
    expect(spawned?.stat.ppid).toBe(process.pid);
  });
});
