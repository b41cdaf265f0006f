import { describe, expect, it } from 'vitest';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { holdInitialize } from '../helpers/hold-initialize.js';
import { freshDatabaseUrl, postgresStores } from '../helpers/pg-stores.js';
import { tempDir } from '../helpers/process.js';
import { join } from 'node:path';

interface ToolList {
  tools: Array<{ name: string; server: string; deferred: boolean }>;
}

/**
 * Issue #28 item 1: with `store` on PostgreSQL, what one daemon keeps is there for another one
 * on the same database — here the tool cache, so a second daemon's first start is warm.
 */
describe('two daemons on one PostgreSQL store', () => {
  it("B's first start serves the tools A cached, deferred, while its own server still connects", async () => {
    const url = await freshDatabaseUrl();
    // Identical config on both, so B looks up the cache entry A wrote; each has its own state dir.
    // A's server connects at once; B's is held in its initialize for the whole test.
    const hold = await holdInitialize({ engaged: false });
    const servers = { slow: fixtureServerConfig('slow-initialize', { env: { INIT_DELAY_MS: '0', ...hold.env } }) };
    const a = await startDaemon({ servers, config: { dbPath: join(await tempDir(), 'a.db') }, deps: { stores: await postgresStores({ url }) } });
    expect(a.daemon.manager.getCatalogue().list()).toHaveLength(3);
    await hold.engage();

    const b = await startDaemon({ servers, config: { dbPath: join(await tempDir(), 'b.db') }, deps: { stores: await postgresStores({ url }) } });
    const { body } = await b.json<ToolList>('/tools');
    expect(body.tools.map((tool) => tool.name).sort()).toEqual(['mcp_slow_add', 'mcp_slow_echo', 'mcp_slow_reverse']);
    for (const tool of body.tools) expect(tool).toMatchObject({ server: 'slow', deferred: true });
  });
});
