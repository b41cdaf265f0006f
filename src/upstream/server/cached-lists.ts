import type { Tool } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage } from '../../errors.js';
import type { ListHints, ToolCacheStore } from '../../store/ports.js';
import { toolListProblem } from '../transport/result-schemas.js';

/** What the cache holds for one server's config: its last tool list and the hints that came with it. */
export interface CachedList {
  tools: Tool[];
  hints: ListHints | undefined;
}

interface Entry {
  configHash: string;
  loading: Promise<CachedList | undefined>;
  /** What `loading` resolved to; unset while the store has not answered. */
  loaded?: { value: CachedList | undefined };
}

/** The server and config an entry is for: an `Upstream` fits. */
export interface ListKey {
  readonly name: string;
  readonly configHash: string;
}

/**
 * The cached tool list of each server's current config, read from the store once per config and
 * kept in step with what this process writes. The store answers asynchronously, but the startup
 * gate and a server waiting for a sign-in decide synchronously: they read what was loaded here
 * (the manager loads every server's entry while it connects, and a connect waits for its own).
 */
export class CachedLists {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly store: ToolCacheStore,
    private readonly log: Logger,
  ) {}

  /** Reads the entry for this config, once; never rejects (a failed read is a miss). */
  load(key: ListKey): Promise<CachedList | undefined> {
    const kept = this.#entries.get(key.name);
    if (kept?.configHash === key.configHash) return kept.loading;
    const entry: Entry = {
      configHash: key.configHash,
      loading: this.store.get(key.name, key.configHash).then(
        (cached) => {
          if (!cached) return undefined;
          // Written before the listing was checked as it is now (or by an older replica): a list
          // a server would be failed for today is a miss, not tools served to agents.
          const problem = toolListProblem(cached.tools);
          if (problem === undefined) return { tools: cached.tools, hints: cached.hints };
          this.log.warn({ server: key.name, problem }, 'cached tool list ignored: not MCP');
          return undefined;
        },
        (err: unknown) => {
          this.log.warn({ server: key.name, err: errorMessage(err) }, 'tool cache read failed');
          return undefined;
        },
      ),
    };
    entry.loading = entry.loading.then((value) => {
      entry.loaded = { value };
      return value;
    });
    this.#entries.set(key.name, entry);
    return entry.loading;
  }

  /** What `load` found for this config; undefined when not loaded (yet), or nothing is cached. */
  peek(key: ListKey): CachedList | undefined {
    const entry = this.#entries.get(key.name);
    return entry?.configHash === key.configHash ? entry.loaded?.value : undefined;
  }

  /**
   * A fresh listing: kept here at once, and written to the store in the background — best
   * effort, a failure is logged. An empty list removes the entry.
   */
  save(key: ListKey, tools: Tool[], hints: ListHints | undefined): void {
    const value = tools.length > 0 ? { tools, hints } : undefined;
    this.#entries.set(key.name, { configHash: key.configHash, loading: Promise.resolve(value), loaded: { value } });
    void this.store.put(key.name, key.configHash, tools, hints).catch((err: unknown) => this.log.warn({ server: key.name, err: errorMessage(err) }, 'tool cache write failed'));
  }
}
