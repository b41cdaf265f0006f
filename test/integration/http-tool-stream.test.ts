import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig, startFixtureHttp } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';
import { sseReader } from '../helpers/sse.js';
import { sharedWithCleanup, startAhead } from '../helpers/shared.js';

/** `POST /tools/:name/call` with `Accept: text/event-stream`: progress as it comes, then the result. */

interface ErrorBody {
  error: { code: string; message: string };
}

function streamCall(sb: TestDaemon, tool: string, args: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
  return sb.fetch(`/tools/${tool}/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ arguments: args }),
    ...init,
  });
}

const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ event: 'progress', data: { progress: i + 1, total: n, message: `step ${i + 1}` } }));

describe('POST /tools/:name/call as an event stream', () => {
  // The daemons start in beforeAll, all at once, instead of one after another (each start mostly
  // waits on its fixtures' processes). The first four tests only call tools, each its own server's
  // (the metric asserted below counts only the legacy server's calls), so they read one daemon;
  // the last three end or cancel their calls and take a daemon each. The plain-JSON and bad-input
  // tests call the `dual` server (ERA dual is rich-stdio's default): one stdio server fewer to start.
  const rich = sharedWithCleanup(async (cleanup) => {
    const remote = await startFixtureHttp('rich-http', { env: { ERA: 'modern' }, cleanup });
    const sb = await startDaemon({
      servers: {
        legacy: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }),
        dual: fixtureServerConfig('rich-stdio', { env: { ERA: 'dual' } }),
        modern: { type: 'http', url: remote.url },
        burst: fixtureServerConfig('progress-burst'),
      },
      lifetime: 'manual',
    });
    cleanup(() => sb.close());
    return sb;
  });
  const cancelMarker = sharedWithCleanup(async (cleanup) => {
    const marker = join(await tempDir(cleanup), 'cancelled');
    const sb = await startDaemon({ servers: { slow: fixtureServerConfig('slow-tool', { env: { CANCEL_MARKER: marker } }) }, lifetime: 'manual' });
    cleanup(() => sb.close());
    return { sb, marker };
  });
  const slow = (shutdownGraceMs: number) =>
    sharedWithCleanup(async (cleanup) => {
      const sb = await startDaemon({ config: { shutdownGraceMs }, servers: { slow: fixtureServerConfig('slow-tool') }, lifetime: 'manual' });
      cleanup(() => sb.close());
      return sb;
    });
  const shortGrace = slow(100);
  const longGrace = slow(20_000);
  beforeAll(() => startAhead(rich, cancelMarker, shortGrace, longGrace));

  it('sends one progress event per notification, then the result, in every protocol era', async () => {
    const sb = await rich();
    for (const server of ['legacy', 'dual', 'modern']) {
      const res = await streamCall(sb, `mcp_${server}_progress`, { steps: 3 });
      expect(res.status, server).toBe(200);
      expect(res.headers.get('content-type'), server).toBe('text/event-stream');
      expect(res.headers.get('cache-control'), server).toBe('no-cache');
      const events = await sseReader(res).rest();
      expect(events.slice(0, -1), server).toEqual(steps(3));
      // A 2026-07-28 result also carries the server's `_meta`: passed through as it came.
      expect(events.at(-1), server).toMatchObject({ event: 'result', data: { content: [{ type: 'text', text: 'done after 3 steps' }] } });
    }
    const metrics = await (await sb.fetch('/metrics')).text();
    expect(metrics).toContain('switchboard_tool_calls_total{transport="rest",server="legacy",tool="mcp_legacy_progress",outcome="ok"} 1');
  });

  it('loses no progress that arrived in the same read as the result', async () => {
    const sb = await rich();
    const res = await streamCall(sb, 'mcp_burst_burst', { steps: 3 });
    expect(await sseReader(res).rest()).toEqual([...steps(3), { event: 'result', data: { content: [{ type: 'text', text: 'burst of 3' }] } }]);
  });

  it('keeps plain JSON for any other Accept', async () => {
    const sb = await rich();
    for (const accept of [undefined, 'application/json', '*/*', 'application/json, text/event-stream;q=0.5', 'text/event-stream;q=0']) {
      const res = await sb.fetch('/tools/mcp_dual_progress/call', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(accept !== undefined ? { accept } : {}) },
        body: JSON.stringify({ arguments: { steps: 2 } }),
      });
      expect(res.headers.get('content-type'), accept).toBe('application/json; charset=utf-8');
      expect(await res.json(), accept).toMatchObject({ content: [{ type: 'text', text: 'done after 2 steps' }] });
    }
  });

  it('answers an unknown tool and bad input with their JSON status before any stream starts', async () => {
    const sb = await rich();
    const unknown = await streamCall(sb, 'mcp_dual_missing', {});
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await unknown.json()) as ErrorBody).error).toEqual({ code: 'TOOL_NOT_FOUND', message: 'No tool named "mcp_dual_missing"' });

    const bad = await sb.fetch('/tools/mcp_dual_progress/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ arguments: [] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorBody).error.code).toBe('VALIDATION_FAILED');
  });

  it('cancels the upstream call when the client goes away mid-stream', async () => {
    const { sb, marker } = await cancelMarker();
    const client = new AbortController();
    const res = await streamCall(sb, 'mcp_slow_slow', { durationMs: 60_000, progressEveryMs: 20 }, { signal: client.signal });
    const events = sseReader(res);
    // The first progress proves the upstream handler is running and listening for cancellation.
    expect((await events.next())?.event).toBe('progress');
    client.abort();

    // The fixture writes the marker when it receives notifications/cancelled.
    expect(await waitForFile(marker)).not.toBe('');
    const metrics = await (await sb.fetch('/metrics')).text();
    expect(metrics).toContain('switchboard_tool_calls_total{transport="rest",server="slow",tool="mcp_slow_slow",outcome="cancelled"} 1');
    expect(metrics).toContain('switchboard_tool_calls_in_flight 0');
  });

  it('ends with an error event when shutdown cancels the call after its grace', async () => {
    const sb = await shortGrace();
    const res = await streamCall(sb, 'mcp_slow_slow', { durationMs: 60_000, progressEveryMs: 20 });
    const events = sseReader(res);
    expect((await events.next())?.event).toBe('progress');
    const closed = sb.close();
    const rest = await events.rest();
    expect(rest.filter((e) => e.event !== 'progress')).toEqual([
      { event: 'error', data: { error: { code: 'SHUTTING_DOWN', message: 'Switchboard is shutting down; the call was cancelled' } } },
    ]);
    await closed;
  });

  it('is waited for by the shutdown drain, like any call in flight', async () => {
    const dir = await tempDir();
    const until = join(dir, 'finish');
    const sb = await longGrace();
    const res = await streamCall(sb, 'mcp_slow_slow', { durationMs: 60_000, progressEveryMs: 20, untilFile: until });
    const events = sseReader(res);
    expect((await events.next())?.event).toBe('progress');

    const closed = sb.close();
    // Stopping: new requests are refused, while the stream goes on.
    expect((await sb.json<ErrorBody>('/tools')).body.error.code).toBe('SHUTTING_DOWN');
    writeFileSync(until, 'now');
    const rest = await events.rest();
    expect(rest.at(-1)).toMatchObject({ event: 'result', data: { content: [{ type: 'text', text: expect.stringMatching(/^done after/) }] } });
    await closed;
  });
});
