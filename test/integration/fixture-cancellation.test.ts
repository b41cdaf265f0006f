import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/**
 * The fixtures that report a cancellation (CANCEL_MARKER) report one that arrives in the same read
 * as its request. A busy box delivers them so: a client whose 200 ms deadline passed before the
 * fixture read its request sends `notifications/cancelled` right behind it, the SDK aborts the
 * request's signal before the tool's handler runs, and an 'abort' listener added then never runs.
 * client-calls.test.ts "times out with TOOL_CALL_TIMEOUT and cancels the request upstream" waited
 * 30 s for a marker that never came, once, with two suites side by side (stop 58). Raw lines on a
 * real fixture process's stdin, so both messages are in one chunk every time.
 */

const line = (message: object): string => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;

describe('fixtures: a cancellation right behind its request', () => {
  it.each([
    ['slow-tool', 'slow', { durationMs: 60_000 }],
    ['task-tools', 'slow_compute', { seconds: 60 }],
  ])('%s writes CANCEL_MARKER for a call cancelled in the same read', async (fixture, tool, args) => {
    const marker = join(await tempDir(), 'cancelled');
    const child = spawn(process.execPath, [fixturePath(fixture)], { env: { ...process.env, CANCEL_MARKER: marker }, stdio: ['pipe', 'pipe', 'ignore'] });
    const exited = once(child, 'exit');
    try {
      const lines = createInterface({ input: child.stdout });
      child.stdin.write(line({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }));
      for await (const answer of lines) if ((JSON.parse(answer) as { id?: number }).id === 1) break;

      child.stdin.write(
        line({ method: 'notifications/initialized' }) +
          line({ id: 2, method: 'tools/call', params: { name: tool, arguments: args } }) +
          line({ method: 'notifications/cancelled', params: { requestId: 2, reason: 'timed out (test)' } }),
      );

      // Missed, the tool runs its whole minute and the marker never comes.
      const deadline = AbortSignal.timeout(10_000);
      const written = await Promise.race([waitForFile(marker, deadline), once(deadline, 'abort').then(() => 'no marker within 10 s')]);
      expect(written).toBe('timed out (test)');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });
});
