import type { SearchConfig } from '../../config/search-schema.js';
import type { StampedEvent } from '../../events/event-bus.js';
import type { AuditStore } from '../../store/access-ports.js';
import type { StateStore } from '../../store/ports.js';
import { createEmbedder } from '../../upstream/catalogue/embeddings-client.js';
import { ToolVectors, type VectorsHealth } from '../../upstream/catalogue/tool-vectors.js';
import type { MCPManager } from '../../upstream/manager.js';
import { hybridSearcher } from './hybrid-search.js';
import type { ToolSearcher } from './search-ranking.js';
import { SearchStats } from './search-stats.js';
import { UsageBoost, type ConversionCounts } from './usage-boost.js';

/**
 * What `/status` says of tool search: how it ranks, the embeddings' state when it has them, and how
 * often agents' searches are followed by a call.
 */
export interface SearchHealth {
  ranking: 'bm25' | 'hybrid';
  embeddings?: VectorsHealth;
  conversions?: ConversionCounts;
}

export interface SearchSetup {
  /** The searcher when it is not the manager's BM25 index alone. */
  searcher?: ToolSearcher;
  /** The per-agent boost from recent calls and pins, and the searches' hits. */
  usage: UsageBoost;
  /** What searches found (`GET /search/stats`, `/metrics`). */
  stats: SearchStats;
  health: () => SearchHealth;
}

/**
 * Tool search as the config asks (issue #37): BM25 alone, or with `search.embeddings` the hybrid
 * ranking, its tool vectors filled from the store and the endpoint in the background — at start
 * and whenever a server's tools change.
 */
export function setUpSearch(
  config: SearchConfig | undefined,
  deps: {
    manager: Pick<MCPManager, 'getCatalogue' | 'toolSearch'>;
    state: StateStore;
    /** The audit, where an agent's recent calls are read from (absent with `audit.enabled: false`). */
    audit?: Pick<AuditStore, 'query'> | undefined;
    subscribe: (listener: (event: StampedEvent) => void) => () => void;
    fetch?: typeof fetch;
  },
): SearchSetup {
  const usage = new UsageBoost(deps.audit);
  const stats = new SearchStats(config?.recordQueries === true);
  deps.subscribe((event) => {
    if (event.type === 'call.finished' && event.kind === 'tools/call' && event.agent !== undefined) usage.called(event.agent, event.name, event.outcome === 'ok');
  });
  const settings = config?.embeddings;
  if (!settings) return { usage, stats, health: () => ({ ranking: 'bm25', conversions: usage.conversions() }) };
  const { manager } = deps;
  const embedder = createEmbedder({ ...settings, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
  const vectors = new ToolVectors(manager.getCatalogue(), embedder, deps.state, { model: settings.model });
  deps.subscribe((event) => {
    if (event.type === 'tools.changed') void vectors.refresh();
  });
  const searcher = hybridSearcher(
    (query, options) => manager.toolSearch.rank(query, options),
    () => manager.getCatalogue(),
    vectors,
    settings,
  );
  return { searcher, usage, stats, health: () => ({ ranking: 'hybrid', embeddings: vectors.health(), conversions: usage.conversions() }) };
}
