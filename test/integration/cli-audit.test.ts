import { describe, expect, it, onTestFinished } from 'vitest';
import { runAudit } from '../../src/cli/client/audit.js';
import { type TestDaemon, startEchoDaemon } from '../helpers/daemon.js';

/** Issue #22 item 4: `switchboard audit` prints the audit log, and follows it with `--follow`. */

/** Output whose waits resolve as soon as the text shows up. */
function capture() {
  let text = '';
  const waiters = new Set<() => void>();
  return {
    output: {
      write: (chunk: string) => {
        text += chunk;
        for (const wake of waiters) wake();
      },
    },
    text: () => text,
    until: (needle: RegExp) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!needle.test(text)) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
  };
}

const call = async (d: TestDaemon, tool: string, args: Record<string, unknown>): Promise<void> => {
  await d.json(`/tools/${tool}/call`, { method: 'POST', body: { arguments: args } });
};

const LINE = (transport: string, server: string, name: string, outcome: string) =>
  new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  -  ${transport}  ${server}  ${name}  ${outcome}  [\\d.]+ ms  \\d+ B → \\d+ B$`);

describe('switchboard audit', () => {
  it('prints the entries oldest first, filtered; --json prints the answer as it is', async () => {
    const d = await startEchoDaemon();
    await call(d, 'mcp_echo_echo', { text: 'a' });
    await call(d, 'mcp_nope_x', {});

    const out = capture();
    const err = capture();
    expect(await runAudit({ argv: ['--url', d.url], env: {}, stdout: out.output, stderr: err.output })).toBe(0);
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(LINE('rest', 'echo', 'mcp_echo_echo', 'ok'));
    expect(lines[1]).toMatch(LINE('rest', '-', 'mcp_nope_x', 'not_found TOOL_NOT_FOUND'));
    expect(err.text()).toBe('');

    const filtered = capture();
    expect(await runAudit({ argv: ['--server', 'echo', '--json', '--url', d.url], env: {}, stdout: filtered.output, stderr: err.output })).toBe(0);
    expect(JSON.parse(filtered.text())).toMatchObject({ entries: [{ name: 'mcp_echo_echo', server: 'echo' }] });

    const bad = capture();
    expect(await runAudit({ argv: ['--outcome', 'maybe', '--url', d.url], env: {}, stdout: capture().output, stderr: bad.output })).toBe(1);
    expect(bad.text()).toMatch(/^switchboard: VALIDATION_FAILED: /);
  });

  it('--follow prints the history, then each call as it finishes, until stopped', async () => {
    const d = await startEchoDaemon();
    await call(d, 'mcp_echo_echo', { text: 'before' });
    const out = capture();
    const err = capture();
    const stop = new AbortController();
    onTestFinished(() => stop.abort());
    const following = runAudit({ argv: ['--follow', '--server', 'echo', '--url', d.url], env: {}, stdout: out.output, stderr: err.output, signal: stop.signal });
    await out.until(/mcp_echo_echo/);

    await call(d, 'mcp_nope_x', {});
    await call(d, 'mcp_echo_reverse', { text: 'during' });
    await out.until(/mcp_echo_reverse/);
    stop.abort();
    expect(await following).toBe(0);
    const lines = out.text().trimEnd().split('\n');
    // The unknown tool is not the echo server's: filtered out.
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(LINE('rest', 'echo', 'mcp_echo_reverse', 'ok'));
    expect(err.text()).toBe('');
  });
});
