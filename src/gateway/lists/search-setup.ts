import type { SearchConfig } from '../../config/search-schema.js';
import type { StampedEvent } from '../../events/event-bus.js';
import type { StateStore } from '../../store/ports.js';
import { createEmbedder } from '../../upstream/catalogue/embeddings-client.js';
import { ToolVectors, type VectorsHealth } from '../../upstream/catalogue/tool-vectors.js';
import type { MCPManager } from '../../upstream/manager.js';
import { hybridSearcher } from './hybrid-search.js';
import type { ToolSearcher } from './search-ranking.js';

/** What `/status` says of tool search: how it ranks, and the embeddings' state when it has them. */
export interface SearchHealth {
  ranking: 'bm25' | 'hybrid';
  embeddings?: VectorsHealth;
}

export interface SearchSetup {
  /** The searcher when it is not the manager's BM25 index alone. */
  searcher?: ToolSearcher;
  health: () => SearchHealth;
}

/**
 * Tool search as the config asks (issue #37): BM25 alone, or with `search.embeddings` the hybrid
 * ranking, its tool vectors filled from the store and the endpoint in the background — at start
 * and whenever a server's tools change.
 */
export function setUpSearch(
  config: SearchConfig | undefined,
  deps: { manager: Pick<MCPManager, 'getCatalogue' | 'toolSearch'>; state: StateStore; subscribe: (listener: (event: StampedEvent) => void) => () => void; fetch?: typeof fetch },
): SearchSetup {
  const settings = config?.embeddings;
  if (!settings) return { health: () => ({ ranking: 'bm25' }) };
  const { manager } = deps;
  const embedder = createEmbedder({ ...settings, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
  const vectors = new ToolVectors(manager.getCatalogue(), embedder, deps.state, { model: settings.model });
  deps.subscribe((event) => {
    if (event.type === 'tools.changed') void vectors.refresh();
  });
  const searcher = hybridSearcher((query, options) => manager.toolSearch.rank(query, options), () => manager.getCatalogue(), vectors, settings);
  return { searcher, health: () => ({ ranking: 'hybrid', embeddings: vectors.health() }) };
}
