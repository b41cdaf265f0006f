import type { ToolCacheStore } from '../../src/store/ports.js';

/**
 * A tool cache that answers like a networked one: every call reaches the real store only
 * `latencyMs` later. Calls still apply in the order they were made, as the port requires
 * (Node fires timers of the same delay in the order they were set).
 */
export function withLatency(store: ToolCacheStore, latencyMs: number): ToolCacheStore {
  const later = <T>(run: () => Promise<T>): Promise<T> =>
    new Promise((resolve) => {
      setTimeout(() => resolve(run()), latencyMs);
    });
  return {
    get: (server, configHash) => later(() => store.get(server, configHash)),
    put: (server, configHash, tools, hints) => later(() => store.put(server, configHash, tools, hints)),
    delete: (server) => later(() => store.delete(server)),
    getVerdict: (server, configHash) => later(() => store.getVerdict(server, configHash)),
    putVerdict: (server, configHash, verdict) => later(() => store.putVerdict(server, configHash, verdict)),
    deleteVerdict: (server) => later(() => store.deleteVerdict(server)),
    close: () => later(() => store.close()),
  };
}
