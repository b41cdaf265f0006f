import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startEmbeddingsServer } from '../helpers/embeddings-server.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/**
 * Issue #37 item 3 end to end: a real daemon with `search.embeddings` pointing at the fixture
 * embeddings endpoint over real HTTP, one rich fixture server. Vectors are computed in the
 * background; a query sharing no word with a tool finds it on `GET /tools/search` and on `/mcp`
 * `search_tools`; with the endpoint gone, searches answer by BM25 and `/status` says why.
 */

interface SearchStatus {
  ranking: string;
  embeddings?: { model: string; vectors: number; tools: number; warning?: string };
  conversions?: { searches: number; hits: number };
}

/** `/status` `search`, read every 100 ms until `done` holds (the vectors are filled in the background). */
async function statusWhen(d: TestDaemon, done: (search: SearchStatus) => boolean): Promise<SearchStatus> {
  const read = async (): Promise<SearchStatus> => (await d.json<{ search: SearchStatus }>('/status')).body.search;
  await expect.poll(async () => done(await read()), { interval: 100, timeout: 10_000 }).toBe(true);
  return read();
}

describe('tool search with an embeddings endpoint', () => {
  it('ranks by meaning once the vectors are in, on REST and /mcp, and by BM25 with a warning when the endpoint is gone', async () => {
    const endpoint = await startEmbeddingsServer();
    onTestFinished(() => endpoint.close());
    const d = await startDaemon({
      servers: { alpha: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }) },
      config: { catalogue: 'search', search: { embeddings: { url: endpoint.url, model: 'fixture-1', timeoutMs: 5_000 } } },
    });

    const ready = await statusWhen(d, (search) => (search.embeddings?.vectors ?? 0) > 0 && search.embeddings?.vectors === search.embeddings?.tools);
    expect(ready).toEqual({
      ranking: 'hybrid',
      embeddings: { model: 'fixture-1', vectors: ready.embeddings?.tools, tools: ready.embeddings?.tools },
      conversions: { searches: 0, hits: 0 },
    });
    expect(endpoint.requests.every((request) => request.model === 'fixture-1')).toBe(true);

    // "how far along" shares no word with "Sends `steps` progress notifications".
    const rest = (await d.json<{ tools: Array<{ name: string }> }>('/tools/search?q=how+far+along&limit=1')).body;
    expect(rest.tools.map((tool) => tool.name)).toEqual(['mcp_alpha_progress']);

    const client = new Client({ name: 'embeddings', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url)));
    onTestFinished(() => client.close());
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: 'how far along', limit: 1 } })) as CallToolResult;
    expect((found.structuredContent as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toEqual(['mcp_alpha_progress']);

    // Outage: the same searches answer, by words alone, and /status says why.
    await endpoint.close();
    const fallback = await d.json<{ tools: Array<{ name: string }> }>('/tools/search?q=progress+notifications&limit=1');
    expect(fallback.status).toBe(200);
    expect(fallback.body.tools.map((tool) => tool.name)).toEqual(['mcp_alpha_progress']);
    const down = (await client.callTool({ name: 'search_tools', arguments: { query: 'send progress notifications', limit: 1 } })) as CallToolResult;
    expect(down.isError).toBeFalsy();
    const status = (await d.json<{ search: SearchStatus }>('/status')).body.search;
    expect(status.ranking).toBe('hybrid');
    expect(status.embeddings?.warning).toMatch(/^The embeddings endpoint failed \(.+\); search ranks by BM25 alone until it answers again$/);
  });
});
