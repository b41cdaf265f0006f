import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';

/**
 * Issue #26 items 1 and 2 against real processes: the per-upstream concurrency gate with its
 * limits pinned (slots, a FIFO queue, `SERVER_BUSY` when it is full, the deadline counting while
 * queued; the adaptive default is in adaptive-limits.test.ts) with the `gated` fixture, which
 * records how many calls it ever ran at once and in what order they started; and an HTTP
 * upstream's 429 + `Retry-After` honoured, with the echo-http fixture logging every `tools/call`
 * that reaches it.
 */

type CallBody = { content?: Array<{ text?: string }>; isError?: boolean; error?: { code: string; message: string } };

function call(d: TestDaemon, id: string, extra: Record<string, unknown> = {}) {
  return d.json<CallBody>('/tools/mcp_gated_work/call', { method: 'POST', body: { arguments: { id }, ...extra } });
}

type Traffic = { inFlight: number; queued: number; limit: number; mode: string; reason: string; queueBound: number; queueMode: string; pausedUntil: string | null };

async function traffic(d: TestDaemon): Promise<Traffic> {
  return (await d.json<{ traffic: Traffic }>('/servers/gated')).body.traffic;
}

describe('concurrency per upstream', () => {
  it('runs at most maxConcurrentCalls, queues in order, refuses a full queue with 429, and times out a queued call', async () => {
    const dir = await tempDir();
    const gated = { ...fixtureServerConfig('gated', { env: { WORK_DIR: dir } }), maxConcurrentCalls: 2, queueSize: 3 };
    const d = await startDaemon({ servers: { gated } });
    const calls = [call(d, '1'), call(d, '2')];
    await waitForFile(join(dir, 'order.log'));
    await expect.poll(() => traffic(d)).toMatchObject({ inFlight: 2, queued: 0 });

    // Each queued call is sent once the one before is in the queue: their order is known.
    for (const [i, id] of ['3', '4', '5'].entries()) {
      calls.push(call(d, id));
      await expect.poll(() => traffic(d)).toMatchObject({ inFlight: 2, queued: i + 1 });
    }
    const refused = await call(d, '6');
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('SERVER_BUSY');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Both pinned (issue #35): the limit stays 2 and the queue holds 3, whatever the answers.
    expect(await traffic(d)).toMatchObject({ limit: 2, mode: 'fixed', reason: 'pinned by maxConcurrentCalls 2', queueBound: 3, queueMode: 'fixed' });
    const metrics = await (await d.fetch('/metrics')).text();
    expect(metrics).toContain('switchboard_upstream_concurrency_limit{server="gated"} 2');
    expect(metrics).toContain('switchboard_upstream_requests_in_flight{server="gated"} 2');
    expect(metrics).toContain('switchboard_upstream_requests_queued{server="gated"} 3');

    // On /mcp the same refusal is a JSON-RPC error carrying the code.
    const agent = new Client({ name: 'traffic', version: '1.0.0' });
    await agent.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url)));
    onTestFinished(() => agent.close());
    const viaMcp = await agent.callTool({ name: 'mcp_gated_work', arguments: { id: '7' } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(ProtocolError.isInstance(viaMcp) && viaMcp.data).toMatchObject({ code: 'SERVER_BUSY', retryAfterMs: expect.any(Number) });

    // Slots free one at a time: the queue moves first in, first out.
    for (const id of ['1', '2', '3', '4', '5']) await writeFile(join(dir, `go-${id}`), '');
    const answers = await Promise.all(calls);
    expect(answers.map((a) => [a.status, a.body.content?.[0]?.text])).toEqual(['1', '2', '3', '4', '5'].map((id) => [200, `done ${id}`]));
    expect((await readFile(join(dir, 'order.log'), 'utf8')).trim().split('\n')).toEqual(['1', '2', '3', '4', '5']);
    expect(await readFile(join(dir, 'max'), 'utf8')).toBe('2');

    // A call whose deadline passes in the queue ends with the timeout code, and leaves the queue.
    const busy = [call(d, '8'), call(d, '9')];
    await expect.poll(() => traffic(d)).toMatchObject({ inFlight: 2 });
    // A timeout is a tool error result, as every failed call (SPEC §7).
    const late = await call(d, '10', { timeoutMs: 300 });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ isError: true, _meta: { 'switchboard/error': { code: 'TOOL_CALL_TIMEOUT' } } });
    expect(late.body.content?.[0]?.text).toMatch(/waiting for one of its 2 slots/);
    expect(await traffic(d)).toMatchObject({ inFlight: 2, queued: 0 });
    await Promise.all(['8', '9'].map((id) => writeFile(join(dir, `go-${id}`), '')));
    expect((await Promise.all(busy)).map((a) => a.status)).toEqual([200, 200]);
    expect((await readFile(join(dir, 'order.log'), 'utf8')).trim().split('\n')).not.toContain('10');
    const waits = (await (await d.fetch('/metrics')).text()).match(/switchboard_upstream_queue_wait_seconds_count\{server="gated"\} (\d+)/);
    expect(Number(waits?.[1])).toBe(3);
  });

  it('ten concurrent calls under the global default of 2 reach the server two at a time, all answered', async () => {
    const dir = await tempDir();
    const d = await startDaemon({ servers: { gated: fixtureServerConfig('gated', { env: { WORK_DIR: dir } }) }, config: { maxConcurrentCalls: 2 } });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => call(d, String(i), { arguments: { id: String(i), holdMs: 50 } })));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(await readFile(join(dir, 'max'), 'utf8')).toBe('2');
    expect((await readFile(join(dir, 'order.log'), 'utf8')).trim().split('\n')).toHaveLength(10);
    // The global value pins every server that does not say; the queue is still bounded by deadlines.
    expect(await traffic(d)).toMatchObject({ limit: 2, mode: 'fixed', queueMode: 'deadline', queueBound: 10_000 });
  });
});

describe('an upstream that asks for a pause', () => {
  it('honours 429 Retry-After: nothing reaches it until then, the call waits within its deadline, a shorter one gets SERVER_BUSY', async () => {
    const http = await startFixtureHttp('echo-http');
    onTestFinished(() => http.close());
    const admin = new URL('/admin/', http.url);
    const d = await startDaemon({ servers: { web: { type: 'http', url: http.url } } });
    const echo = (extra: Record<string, unknown> = {}) => d.json<CallBody>('/tools/mcp_web_echo/call', { method: 'POST', body: { arguments: { text: 'hi' }, ...extra } });
    expect((await echo()).status).toBe(200);

    // 1 s, the shortest pause Retry-After can ask for (whole seconds): what is tested is that it is honoured.
    await fetch(new URL('throttle?seconds=1', admin), { method: 'POST' });
    const waited = echo();
    // The pause is known once the refused call came back; a call with a shorter deadline is refused at once.
    await expect.poll(async () => (await d.json<{ traffic: { pausedUntil: string | null } }>('/servers/web')).body.traffic.pausedUntil).not.toBeNull();
    const short = await echo({ timeoutMs: 100 });
    expect(short.status).toBe(429);
    expect(short.body.error).toMatchObject({ code: 'SERVER_BUSY', message: expect.stringMatching(/asked for a pause until/) });
    expect(Number(short.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const answer = await waited;
    expect(answer.status).toBe(200);
    expect(answer.body.content?.[0]?.text).toBe('hi');
    const arrivals = (await (await fetch(new URL('tool-calls', admin))).json()) as Array<{ at: number; refused: boolean }>;
    // Before the pause one call, then the refused one, then nothing for 1 s, then the retry.
    expect(arrivals.map((a) => a.refused)).toEqual([false, true, false]);
    expect((arrivals[2] as { at: number }).at - (arrivals[1] as { at: number }).at).toBeGreaterThanOrEqual(950);
    // A pause is no crash: the server stayed connected throughout.
    expect((await d.json<{ status: string; restarts: number }>('/servers/web')).body).toMatchObject({ status: 'connected', restarts: 0 });
  });
});
