import type { Tool } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hybridSearcher } from '../../../../src/gateway/lists/hybrid-search.js';
import { MemoryStateStore } from '../../../../src/store/state-store.js';
import { createEmbedder } from '../../../../src/upstream/catalogue/embeddings-client.js';
import { ToolCatalogue } from '../../../../src/upstream/catalogue/tool-catalogue.js';
import { ToolSearch } from '../../../../src/upstream/catalogue/tool-search.js';
import { ToolVectors } from '../../../../src/upstream/catalogue/tool-vectors.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../../../helpers/embeddings-server.js';

/**
 * Tool vectors and the hybrid ranking (issue #37 item 3) against the fixture embeddings endpoint
 * over real HTTP: cached by model × definition, a warm start asks nothing, a changed model asks
 * again, an outage falls back to BM25 with a warning.
 */
const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: 'object' } });

function catalogue(): ToolCatalogue {
  const c = new ToolCatalogue();
  c.setServer('jobs', 'Test', [tool('status', 'Reports the percentage done of a running job'), tool('cancel', 'Stops a running job'), tool('notes', 'Writes to the job journal')], {
    deferred: false,
    stale: false,
  });
  c.setServer('files', 'Test', [tool('read', 'Reads a file'), tool('list_roots', 'Lists the folders of the workspace')], { deferred: false, stale: false });
  return c;
}

let server: EmbeddingsServer;
beforeAll(async () => {
  server = await startEmbeddingsServer();
});
afterAll(async () => {
  await server.close();
});

const toolTexts = (model: string): number => server.requests.filter((r) => r.model === model).reduce((n, r) => n + r.input.length, 0);

describe('ToolVectors', () => {
  it('embeds every tool once, reads them back from the store on a warm start, and again for another model', async () => {
    const c = catalogue();
    const store = new MemoryStateStore();
    const embedder = (model: string) => createEmbedder({ url: server.url, model });
    const first = new ToolVectors(c, embedder('m1'), store, { model: 'm1' });
    await first.refresh();
    expect(toolTexts('m1')).toBe(5);
    expect(first.health()).toEqual({ model: 'm1', vectors: 5, tools: 5 });

    const warm = new ToolVectors(c, embedder('m1'), store, { model: 'm1' });
    await warm.refresh();
    expect(toolTexts('m1')).toBe(5);
    expect(warm.health().vectors).toBe(5);

    // A changed definition is embedded again, alone.
    c.setServer('files', 'Test', [tool('read', 'Reads a file'), tool('list_roots', 'Lists the roots of the workspace')], { deferred: false, stale: false });
    await warm.refresh();
    expect(toolTexts('m1')).toBe(6);

    const other = new ToolVectors(c, embedder('m2'), store, { model: 'm2' });
    await other.refresh();
    expect(toolTexts('m2')).toBe(5);
  });

  it('ranks a tool that shares no word with the query first, and falls back to BM25 with a warning when the endpoint is gone', async () => {
    const outage = await startEmbeddingsServer();
    const c = catalogue();
    const vectors = new ToolVectors(c, createEmbedder({ url: outage.url, model: 'm1' }), new MemoryStateStore(), { model: 'm1' });
    await vectors.refresh();
    const index = new ToolSearch(c);
    const lexical = (query: string, options: { limit: number }) => index.rank(query, options);
    const search = hybridSearcher(lexical, () => c, vectors, { weight: 0.5, timeoutMs: 2_000 });

    // "how far along" shares no word with "Reports the percentage done of a running job".
    expect(index.search('how far along', { limit: 5 })).toEqual([]);
    const ranked = await search('how far along', { limit: 5 });
    expect(ranked.tools[0]?.tool.name).toBe('mcp_jobs_status');
    expect(ranked.servers[0]?.server).toBe('jobs');
    // A word match and a meaning match together beat either alone.
    expect((await search('diary job', { limit: 1 })).tools[0]?.tool.name).toBe('mcp_jobs_notes');

    await outage.close();
    const fallback = await search('stops a running job', { limit: 5 });
    expect(fallback).toEqual(lexical('stops a running job', { limit: 5 }));
    expect(vectors.health().warning).toMatch(/^The embeddings endpoint failed \(.+\); search ranks by BM25 alone until it answers again$/);
    // The background does not throw either.
    await expect(new ToolVectors(c, createEmbedder({ url: outage.url, model: 'm3' }), new MemoryStateStore(), { model: 'm3' }).refresh()).resolves.toBeUndefined();
  });
});
