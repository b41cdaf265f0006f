import { describe, expect, it } from 'vitest';
import { nextDaemonEvent, startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { sseReader } from '../helpers/sse.js';

/**
 * A REST call made while the startup gate is still open (issue #20 item 7): the name may not be
 * listed yet, because its server is still connecting. Like `/mcp`, REST waits for the gate within
 * the call's deadline, then answers — or 404s when the name is still unknown.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

/** A daemon whose only server answers `initialize` after 0.8 s, with nothing cached: the gate waits for it. */
async function startingDaemon() {
  const sb = await startDaemon({
    servers: { slow: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '800' } }) },
    until: 'listening',
  });
  await nextDaemonEvent(sb.daemon, 'server.status', (e) => e.server === 'slow' && e.status === 'connecting');
  expect(sb.daemon.runtime.state).toBe('starting');
  return sb;
}

describe('REST calls while the startup gate is open', () => {
  it('waits for a tool that is not listed yet, then answers with its result', async () => {
    const sb = await startingDaemon();
    expect((await sb.json<{ tools: unknown[] }>('/tools?wait=false')).body.tools).toEqual([]);
    const call = await sb.json('/tools/mcp_slow_echo/call', { method: 'POST', body: { arguments: { text: 'early' } } });
    expect(call).toMatchObject({ status: 200, body: { content: [{ type: 'text', text: 'early' }] } });
    expect(sb.daemon.runtime.state).toBe('ready');
  });

  it('streams the result of such a call too (Accept: text/event-stream)', async () => {
    const sb = await startingDaemon();
    const res = await sb.fetch('/tools/mcp_slow_echo/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ arguments: { text: 'streamed' } }),
    });
    expect(res.status).toBe(200);
    expect(await sseReader(res).rest()).toEqual([{ event: 'result', data: { content: [{ type: 'text', text: 'streamed' }] } }]);
  });

  it('answers 404 TOOL_NOT_FOUND for a name no server has once the gate has passed', async () => {
    const sb = await startingDaemon();
    const call = await sb.json<ErrorBody>('/tools/mcp_slow_nope/call', { method: 'POST', body: { arguments: {} } });
    expect(call.status).toBe(404);
    expect(call.body.error.code).toBe('TOOL_NOT_FOUND');
    // It waited for the gate rather than answering from the partial catalogue.
    expect(sb.daemon.runtime.state).toBe('ready');
  });

  it('gives up waiting at the call deadline: 404 while the gate is still open', async () => {
    const sb = await startingDaemon();
    const call = await sb.json<ErrorBody>('/tools/mcp_slow_echo/call', { method: 'POST', body: { arguments: { text: 'x' }, timeoutMs: 200 } });
    expect(call.status).toBe(404);
    expect(call.body.error.code).toBe('TOOL_NOT_FOUND');
    expect(sb.daemon.runtime.state).toBe('starting');
  });
});
