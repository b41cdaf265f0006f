import { describe, expect, it } from 'vitest';
import { nextDaemonEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/**
 * `GET /tools` is joined from per-server fragments (src/http/tool-list-cache.ts). Over real HTTP,
 * with real `many-tools` servers changing one at a time, the body must stay exactly what one
 * `JSON.stringify` of the daemon's whole tool list gives — including when servers' names
 * interleave and when a change on one server renames another server's tool through a collision —
 * and the ETag and `?server=` must follow.
 */

const manyTools = (instance: string, tools: number, toolPrefix?: string) => ({
  ...fixtureServerConfig('many-tools', { env: { TOOLS: String(tools), BENCH_INSTANCE: instance } }),
  ...(toolPrefix !== undefined ? { toolPrefix } : {}),
});

/** The body as it was before fragments: the whole list through one JSON.stringify. */
function wholeList(daemon: TestDaemon): string {
  const catalogue = daemon.daemon.manager.getCatalogue();
  return JSON.stringify({ version: catalogue.version, tools: catalogue.list() });
}

async function getTools(daemon: TestDaemon, query = ''): Promise<{ text: string; etag: string }> {
  const res = await daemon.fetch(`/tools${query}`);
  expect(res.status).toBe(200);
  return { text: await res.text(), etag: res.headers.get('etag') ?? '' };
}

/** Calls `add_tool` on `server` and waits for the daemon to have re-listed it. */
async function addTool(daemon: TestDaemon, server: string, name: string): Promise<void> {
  const changed = nextDaemonEvent(daemon.daemon, 'tools.changed', (event) => event.server === server && event.cause === 'list_changed');
  const tool = daemon.daemon.manager
    .getCatalogue()
    .list()
    .find((t) => t.server === server && t.originalName === 'add_tool');
  const res = await daemon.fetch(`/tools/${tool?.name ?? 'missing'}/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: { name } }),
  });
  expect(res.status).toBe(200);
  await changed;
}

describe('GET /tools from per-server fragments', () => {
  it('stays byte-identical to the whole list, with a fresh ETag, as servers change one at a time', async () => {
    const daemon = await startDaemon({
      servers: {
        big: manyTools('big', 300),
        // Under the prefix "" these two list the same names: `a` keeps them, `b`'s get a hash.
        a: manyTools('a', 20, ''),
        b: manyTools('b', 20, ''),
        // Names inside `a`/`b`'s range, so the sorted list alternates between servers.
        mid: manyTools('mid', 20, 'tool_1'),
      },
    });
    const first = await getTools(daemon);
    expect(JSON.parse(first.text).tools.length).toBe(360);
    expect(first.text).toBe(wholeList(daemon));

    // `b` gets a name nobody has; then `a` takes the same name, which renames `b`'s tool.
    await addTool(daemon, 'b', 'fresh');
    const afterB = await getTools(daemon);
    expect(afterB.text).toBe(wholeList(daemon));
    expect(afterB.etag).not.toBe(first.etag);
    expect(JSON.parse(afterB.text).tools.some((t: { name: string; server: string }) => t.name === 'fresh' && t.server === 'b')).toBe(true);

    await addTool(daemon, 'a', 'fresh');
    const afterA = await getTools(daemon);
    expect(afterA.text).toBe(wholeList(daemon));
    const fresh = JSON.parse(afterA.text).tools.filter((t: { originalName: string }) => t.originalName === 'fresh');
    expect(fresh.map((t: { server: string; name: string }) => [t.server, t.name === 'fresh'])).toEqual([
      ['a', true],
      ['b', false],
    ]);

    await addTool(daemon, 'big', 'zzz_last');
    const afterBig = await getTools(daemon);
    expect(afterBig.text).toBe(wholeList(daemon));

    // Revalidation: the old tag is a miss, the current one a 304.
    expect((await daemon.fetch('/tools', { headers: { 'if-none-match': afterA.etag } })).status).toBe(200);
    expect((await daemon.fetch('/tools', { headers: { 'if-none-match': afterBig.etag } })).status).toBe(304);

    // `?server=` is that server's share of the list, serialised the same way.
    const list = JSON.parse(afterBig.text) as { version: number; tools: Array<{ server: string }> };
    for (const server of ['b', 'mid', 'nobody']) {
      const filtered = await getTools(daemon, `?server=${server}`);
      expect(filtered.text).toBe(JSON.stringify({ version: list.version, tools: list.tools.filter((t) => t.server === server) }));
    }
  });
});
