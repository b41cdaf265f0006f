import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CLOSE_TOO_SLOW, type WireEvent } from '../../src/http/ws/event-hub.js';
import { startDaemon } from '../helpers/daemon.js';
import { closed, collectUntil, nextEvent, openEvents, received } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/**
 * A subscriber that stops reading must be dropped with 4008 once its queue passes the bound
 * (1 MiB), while everyone else keeps getting every event. Loopback TCP absorbs a few MiB before
 * the daemon's own queue grows, so the events here are big: a server with 10 000 tools under a
 * long name makes each single-server reload emit two `tools.changed` of ~0.6 MB each.
 */
const SERVER = 'a_server_with_a_rather_long_name_to_fatten_tool_names';
const MAX_RELOADS = 15;

function rawSocket(ws: object): Socket {
  return (ws as { _socket: Socket })._socket;
}

describe('GET /events slow subscriber', () => {
  it('drops a subscriber that stops reading with 4008; a fast one receives everything', async () => {
    const daemon = await startDaemon({
      // The raw many-tools fixture (no SDK): each reload starts it again, so it had better start light.
      servers: { [SERVER]: fixtureServerConfig('many-tools', { env: { TOOLS: '10000', PAGE_SIZE: '200' } }) },
    });
    expect(daemon.daemon.manager.getCatalogue().list()).toHaveLength(10_000);

    const fast = await openEvents(daemon.url);
    const slow = await openEvents(daemon.url, { onOpen: (ws) => rawSocket(ws).pause() });
    const { seq: start } = await nextEvent(fast, 'hello');
    expect(daemon.daemon.events.subscriberCount).toBe(2);

    let reloads = 0;
    const delivered: WireEvent[] = [];
    // Reload until the hub has let go of the slow subscriber (bounded), then once more so the
    // fast one is seen to keep receiving after the drop.
    while (daemon.daemon.events.subscriberCount === 2 && reloads < MAX_RELOADS) {
      const { status } = await daemon.json(`/servers/${SERVER}/reload`, { method: 'POST' });
      expect(status).toBe(200);
      delivered.push(...(await collectUntil(fast, (e) => e.type === 'reload.finished')));
      reloads++;
    }
    expect(daemon.daemon.events.subscriberCount).toBe(1);
    await daemon.json(`/servers/${SERVER}/reload`, { method: 'POST' });
    delivered.push(...(await collectUntil(fast, (e) => e.type === 'reload.finished')));

    // The fast subscriber got every event, in order, with no gap, including after the drop.
    expect(delivered.map((e) => e.seq)).toEqual(delivered.map((_, i) => start + 1 + i));

    // The slow one, once it reads again, finds a gap-free prefix and then the 4008 close.
    rawSocket(slow).resume();
    expect(await closed(slow, 30_000)).toEqual({ code: CLOSE_TOO_SLOW, reason: 'subscriber too slow' });
    const [hello, ...got] = received(slow);
    expect(hello).toMatchObject({ type: 'hello', seq: start });
    expect(got.map((e) => e.seq)).toEqual(got.map((_, i) => start + 1 + i));
    expect(got.length).toBeLessThan(delivered.length);
  }, 120_000);
});
