import { configHash } from './config-hash.js';
import type { DiscoveryResult, ServerConfig, ServerSource } from './types.js';

/** The servers the runtime runs, with the config and source each was started from. */
export type AppliedServers = Readonly<Record<string, { config: ServerConfig; source: ServerSource }>>;

export interface ReconcilePlan {
  /** In the new config, not running. */
  added: string[];
  /** Running, gone from the config. */
  removed: string[];
  /** Running, and their config hash changed: reconnect. */
  changed: string[];
  /** Running with the same config: keep the connection. */
  unchanged: string[];
  /** Running, and their file (or their entry) is now invalid: keep the last good config. */
  kept: string[];
  /** What runs once the plan is applied. */
  next: Record<string, { config: ServerConfig; source: ServerSource }>;
}

/**
 * Compares what runs with a fresh discovery (SPEC §8 live config). A file that became
 * unreadable or unparsable, or an entry that became invalid, must not tear down a server that
 * works — the user is most likely in the middle of an edit — so such servers keep their last
 * good config until the file is valid again (or the entry is deleted). Pure: no I/O.
 */
export function planReconcile(applied: AppliedServers, discovery: DiscoveryResult): ReconcilePlan {
  const failedFiles = new Set(discovery.failedFiles ?? []);
  const invalid = new Set((discovery.invalid ?? []).map((i) => entryKey(i.name, i.path)));
  const next: ReconcilePlan['next'] = {};
  const kept: string[] = [];

  for (const [name, config] of Object.entries(discovery.configs)) {
    const source = discovery.sources[name];
    if (source) next[name] = { config, source };
  }
  for (const [name, previous] of Object.entries(applied)) {
    const path = previous.source.path;
    if (failedFiles.has(path) || invalid.has(entryKey(name, path))) {
      next[name] = previous;
      kept.push(name);
    }
  }

  const added: string[] = [];
  const changed: string[] = [];
  const unchanged: string[] = [];
  for (const [name, { config }] of Object.entries(next)) {
    const previous = applied[name];
    if (!previous) added.push(name);
    else if (previous.config === config || configHash(previous.config) === configHash(config)) unchanged.push(name);
    else changed.push(name);
  }
  const removed = Object.keys(applied).filter((name) => !(name in next));
  const sort = (list: string[]): string[] => list.sort();
  return {
    added: sort(added),
    removed: sort(removed),
    changed: sort(changed),
    unchanged: sort(unchanged),
    kept: sort(kept),
    next,
  };
}

function entryKey(name: string, path: string): string {
  return JSON.stringify([name, path]);
}
