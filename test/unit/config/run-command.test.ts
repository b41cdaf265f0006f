import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runShellCommand } from '../../../src/config/run-command.js';
import { makeTree } from './temp-tree.js';

describe('runShellCommand', () => {
  it('resolves with trimmed stdout', async () => {
    expect(await runShellCommand('printf "  a b \\n\\n"', { timeoutMs: 5_000 })).toEqual({ ok: true, stdout: 'a b' });
  });

  it('has killed the command by the time it reports a timeout', async () => {
    const t = await makeTree();
    const pidFile = join(t.root, 'pid');
    const result = await runShellCommand(`echo $$ > '${pidFile}'; exec sleep 30`, { timeoutMs: 500 });
    expect(result).toEqual({ ok: false, reason: 'timed out' });
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  it('gives up on output larger than the limit', async () => {
    expect(await runShellCommand('echo 12345678901234567890', { timeoutMs: 5_000, maxOutputBytes: 10 })).toEqual({
      ok: false,
      reason: 'output too large',
    });
  });

  it('reports the exit code, not the output', async () => {
    expect(await runShellCommand('echo secret; exit 7', { timeoutMs: 5_000 })).toEqual({ ok: false, reason: 'exited with code 7' });
  });
});
