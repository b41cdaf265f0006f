import { describe, expect, it, vi } from 'vitest';
import { nextDaemonEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { sseReader } from '../helpers/sse.js';

/**
 * A REST call made while the startup gate is still open (issue #20 item 7): the name may not be
 * listed yet, because its server is still connecting. Like `/mcp`, REST waits for the gate within
 * the call's deadline, then answers — or 404s when the name is still unknown.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

/**
 * A daemon whose only server holds its `initialize` answer until the test releases it, with
 * nothing cached: the gate waits for it.
 */
async function startingDaemon() {
  const hold = await holdInitialize();
  const sb = await startDaemon({
    servers: { slow: fixtureServerConfig('echo-stdio', { env: hold.env }) },
    until: 'listening',
  });
  await nextDaemonEvent(sb.daemon, 'server.status', (e) => e.server === 'slow' && e.status === 'connecting');
  expect(sb.daemon.runtime.state).toBe('starting');
  return { sb, hold };
}

/**
 * Resolves when a request starts waiting for the gate: the next `runtime.whenReady()` call
 * (the plain call path and the streaming one both wait on it), observed, not guessed by a timer.
 */
function waitsForGate(sb: TestDaemon): Promise<void> {
  const { runtime } = sb.daemon;
  const whenReady = runtime.whenReady.bind(runtime);
  return new Promise((resolve) => {
    vi.spyOn(runtime, 'whenReady').mockImplementation(() => {
      resolve();
      return whenReady();
    });
  });
}

describe('REST calls while the startup gate is open', () => {
  it('waits for a tool that is not listed yet, then answers with its result', async () => {
    const { sb, hold } = await startingDaemon();
    expect((await sb.json<{ tools: unknown[] }>('/tools?wait=false')).body.tools).toEqual([]);
    const waiting = waitsForGate(sb);
    const pending = sb.json('/tools/mcp_slow_echo/call', { method: 'POST', body: { arguments: { text: 'early' } } });
    await waiting;
    expect(sb.daemon.runtime.state).toBe('starting');
    await hold.release();
    const call = await pending;
    expect(call).toMatchObject({ status: 200, body: { content: [{ type: 'text', text: 'early' }] } });
    expect(sb.daemon.runtime.state).toBe('ready');
  });

  it('streams the result of such a call too (Accept: text/event-stream)', async () => {
    const { sb, hold } = await startingDaemon();
    const waiting = waitsForGate(sb);
    const pending = sb.fetch('/tools/mcp_slow_echo/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ arguments: { text: 'streamed' } }),
    });
    await waiting;
    await hold.release();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await sseReader(res).rest()).toEqual([{ event: 'result', data: { content: [{ type: 'text', text: 'streamed' }] } }]);
  });

  it('answers 404 TOOL_NOT_FOUND for a name no server has once the gate has passed', async () => {
    const { sb, hold } = await startingDaemon();
    const waiting = waitsForGate(sb);
    const pending = sb.json<ErrorBody>('/tools/mcp_slow_nope/call', { method: 'POST', body: { arguments: {} } });
    await waiting;
    await hold.release();
    const call = await pending;
    expect(call.status).toBe(404);
    expect(call.body.error.code).toBe('TOOL_NOT_FOUND');
    // It waited for the gate rather than answering from the partial catalogue.
    expect(sb.daemon.runtime.state).toBe('ready');
  });

  it('gives up waiting at the call deadline: 404 while the gate is still open', async () => {
    // The hold is never released: the gate cannot pass before the call's deadline.
    const { sb } = await startingDaemon();
    const call = await sb.json<ErrorBody>('/tools/mcp_slow_echo/call', { method: 'POST', body: { arguments: { text: 'x' }, timeoutMs: 200 } });
    expect(call.status).toBe(404);
    expect(call.body.error.code).toBe('TOOL_NOT_FOUND');
    expect(sb.daemon.runtime.state).toBe('starting');
  });
});
