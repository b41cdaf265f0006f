import { describe, expect, it } from 'vitest';
import { runCall, type CommandIo } from '../../src/cli/client/index.js';
import { deferred } from '../../src/util/deferred.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/** `switchboard call` on a terminal: the tool's progress as one live line on stderr, cleared before the result. */

const CLEAR = '\r\u001b[2K';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `switchboard call` in-process; stderr is a terminal when `tty` is given. */
async function call(argv: string[], tty?: { columns?: number; onWrite?: (chunk: string) => void }): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = {
    argv,
    env: {},
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: {
      write: (chunk: string) => {
        stderr += chunk;
        tty?.onWrite?.(chunk);
      },
      ...(tty ? { isTTY: true, ...(tty.columns !== undefined ? { columns: tty.columns } : {}) } : {}),
    },
  };
  const code = await runCall(io);
  return { code, stdout, stderr };
}

describe('switchboard call on a terminal', () => {
  it('shows each progress step on one updating line, clears it, then prints the result', async () => {
    const sb = await startDaemon({ servers: { rich: fixtureServerConfig('rich-stdio') } });
    const args = ['--url', sb.url, 'mcp_rich_progress', '{"steps":3}'];

    const live = await call(args, { columns: 80 });
    expect(live).toEqual({
      code: 0,
      stdout: 'done after 3 steps\n',
      stderr: `${CLEAR}[1/3] step 1${CLEAR}[2/3] step 2${CLEAR}[3/3] step 3${CLEAR}`,
    });

    // Not a terminal: exactly what it printed before streaming existed.
    expect(await call(args)).toEqual({ code: 0, stdout: 'done after 3 steps\n', stderr: '' });

    // --json prints the result as the daemon sent it, progress or not.
    const json = await call([...args, '--json'], {});
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: [{ type: 'text', text: 'done after 3 steps' }] });
    expect(json.stderr.endsWith(CLEAR)).toBe(true);
  });

  it('reports an unknown tool as one line, as off a terminal', async () => {
    const sb = await startDaemon({ servers: { rich: fixtureServerConfig('rich-stdio') } });
    const result = await call(['--url', sb.url, 'mcp_rich_nothing'], {});
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('switchboard: TOOL_NOT_FOUND: No tool named "mcp_rich_nothing"\n');
  });

  it('clears the line and reports the error event of a call cut off by shutdown', async () => {
    const sb = await startDaemon({ config: { shutdownGraceMs: 100 }, servers: { slow: fixtureServerConfig('slow-tool') } });
    const progressShown = deferred();
    const running = call(['--url', sb.url, 'mcp_slow_slow', '{"durationMs":60000,"progressEveryMs":20}'], {
      onWrite: (chunk) => {
        if (chunk.startsWith(`${CLEAR}[`)) progressShown.resolve();
      },
    });
    await progressShown.promise;
    await sb.close();
    const result = await running;
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    // The last progress line, erased, then the error event's code and message.
    const [lastLine, message] = result.stderr.split(CLEAR).slice(-2);
    expect(lastLine).toMatch(/^\[\d+\/60000\]$/);
    expect(message).toBe('switchboard: SHUTTING_DOWN: Switchboard is shutting down; the call was cancelled\n');
  });
});
