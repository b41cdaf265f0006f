import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import type { WireEvent } from '../../src/http/ws/event-hub.js';
import type { ServerLogEvent } from '../../src/events/daemon-events.js';
import type { StampedEvent } from '../../src/events/event-bus.js';
import { discoverAndLoadMCPTools } from '../../src/loader.js';
import { discoveryOf, startDaemon } from '../helpers/daemon.js';
import { collectUntil, nextEvent, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';
import { callTool } from '../helpers/route-call.js';

/**
 * Issue #20 item 5, issue #34 item 4: one composition root (`createDaemon` in `src/daemon.ts`)
 * builds the daemon for `serve` and for the embedding API, and one event bus numbers every event,
 * whoever publishes it.
 */

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function record(bus: { subscribe(listener: (event: StampedEvent) => void): () => void }): StampedEvent[] {
  const events: StampedEvent[] = [];
  onTestFinished(bus.subscribe((event) => void events.push(event)));
  return events;
}

describe('the embedding API is built by the composition root', () => {
  it('discoverAndLoadMCPTools serves a real stdio server, and its runtime, manager and log forwarding publish on one bus with seq', async () => {
    const home = await tempDir();
    const cwd = await tempDir();
    await writeFile(join(cwd, '.mcp.json'), JSON.stringify({ mcpServers: { intro: fixtureServerConfig('introspect') } }));

    const { tools, errors, manager, runtime, bus } = await discoverAndLoadMCPTools(cwd, { home, env: {} });
    onTestFinished(() => runtime.close());

    expect(errors).toEqual([]);
    expect(tools.map((t) => t.name)).toContain('mcp_intro_log_stderr');
    // The startup went over the bus: connecting, connected, tools.changed.
    expect(bus.seq).toBeGreaterThanOrEqual(3);

    const events = record(bus);
    const before = bus.seq;
    await runtime.reloadServer('intro');

    // The runtime's reload.* and the manager's status and catalogue changes, in one numbering.
    expect(events.map((e) => e.seq)).toEqual(range(before + 1, bus.seq));
    expect(events[0]).toMatchObject({ type: 'reload.started', server: 'intro' });
    expect(events.at(-1)).toMatchObject({ type: 'reload.finished', server: 'intro', ok: true });
    expect(events).toContainEqual(expect.objectContaining({ type: 'tools.changed', server: 'intro', cause: 'reload', added: expect.arrayContaining(['mcp_intro_log_stderr']) }));

    // Log forwarding is wired as in the daemon: the server's stderr becomes `server.log` on the bus.
    const logged = new Promise<StampedEvent & ServerLogEvent>((resolve) => {
      const off = bus.subscribe((event) => {
        if (event.type !== 'server.log' || !event.lines.includes('from the embedder')) return;
        off();
        resolve(event);
      });
      onTestFinished(off);
    });
    await callTool(manager, 'mcp_intro_log_stderr', { lines: ['from the embedder'] });
    const log = await logged;
    expect(log).toMatchObject({ server: 'intro', stream: 'stderr', lines: ['from the embedder'] });
    expect(events).toContain(log);
    expect(events.map((e) => e.seq)).toEqual(range(before + 1, bus.seq));
  });
});

describe('the daemon relays the bus on /events', () => {
  it('reload and config events reach the WebSocket feed with the bus seq, gap-free', async () => {
    const servers: Record<string, ServerConfig> = { echo: fixtureServerConfig('echo-stdio') };
    // The gate waits for every server, so each reload ends with its servers live (no late events).
    const sb = await startDaemon({ discover: () => Promise.resolve(discoveryOf(servers)), config: { startupGateMs: 60_000 } });
    const { bus } = sb.daemon;
    const onBus = record(bus);
    const ws = await openEvents(sb.url);
    const hello = await nextEvent(ws, 'hello');
    expect(hello.seq).toBe(bus.seq);

    servers.more = fixtureServerConfig('echo-stdio');
    const { status } = await sb.json('/reload', { method: 'POST' });
    expect(status).toBe(200);

    const feed = await collectUntil(ws, (event: WireEvent) => event.type === 'reload.finished');
    expect(feed.map((e) => e.seq)).toEqual(range(hello.seq + 1, hello.seq + feed.length));
    expect(feed.map((e) => e.type)).toEqual(expect.arrayContaining(['reload.started', 'server.status', 'tools.changed', 'config.changed', 'reload.finished']));
    expect(feed.find((e) => e.type === 'config.changed')).toMatchObject({ cause: 'reload', added: ['more'], removed: [], changed: [] });
    // The feed sends exactly what the bus delivered: same events, same seq, same ts.
    expect(feed).toEqual(JSON.parse(JSON.stringify(onBus.slice(0, feed.length))));
  });
});
