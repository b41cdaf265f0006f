import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { collectUntil, nextEvent, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { tempDir } from '../helpers/process.js';

interface ToolList {
  tools: Array<{ name: string; server: string; deferred: boolean }>;
}

describe('GET /events late background loads', () => {
  it('serves cached tools as deferred at once, then pushes tools.changed cause "background"', async () => {
    const dbPath = join(await tempDir(), 'switchboard.db');
    // Identical config on both runs, so the second run hits the cache the first one wrote; the
    // hold is off for the first run and on for the second, whose server connects when released.
    const hold = await holdInitialize({ engaged: false });
    const servers = { slow: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...hold.env } }) };

    const first = await startDaemon({ servers, config: { dbPath } });
    expect(first.daemon.manager.getCatalogue().list()).toHaveLength(3);
    await first.close();
    await hold.engage();

    // Idle until the feed is open: a start begun before it could serve from the cache before its hello.
    const second = await startDaemon({ servers, config: { dbPath }, until: 'idle' });
    const ws = await openEvents(second.url);
    const hello = await nextEvent(ws, 'hello');
    await second.daemon.start();

    const { status, body } = await second.json<ToolList>('/tools');
    expect(status).toBe(200);
    expect(body.tools.map((tool) => tool.name).sort()).toEqual(['mcp_slow_add', 'mcp_slow_echo', 'mcp_slow_reverse']);
    for (const tool of body.tools) expect(tool).toMatchObject({ server: 'slow', deferred: true });
    await hold.release();

    const events = await collectUntil(ws, (e) => e.type === 'tools.changed' && e.cause === 'background');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => hello.seq + 1 + i));
    expect(events).toContainEqual(expect.objectContaining({ type: 'tools.changed', server: 'slow', cause: 'startup', deferred: true, toolCount: 3 }));
    expect(events.at(-1)).toMatchObject({ server: 'slow', deferred: false, toolCount: 3 });

    const after = await second.json<ToolList>('/tools');
    for (const tool of after.body.tools) expect(tool.deferred).toBe(false);
  });
});
