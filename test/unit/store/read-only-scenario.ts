import { readFileSync } from 'node:fs';
import { openToolCache } from '../../../src/store/open-tool-cache.js';
import { NoopToolCacheStore } from '../../../src/store/tool-cache-store.js';
import { HASH, TOOLS } from './cache-fixtures.js';

/**
 * What a daemon does with a cache file it may not write: open, read the seeded list, try to
 * save a new one, read again. Run in-process, or — when the tests run as root, for whom mode
 * bits don't apply — in a child process started as an unprivileged user, where they do (bundled
 * by read-only-child.ts).
 */
export interface ReadOnlyOutcome {
  /** Who ran it: the mode-bit tests are meaningless as root. */
  uid: number | null;
  warnings: string[];
  store: 'sqlite' | 'noop';
  /** Tool names the store returned before and after the attempted write. */
  before: string[] | null;
  after: string[] | null;
  putThrew: string | null;
  /** The file's bytes are what the seeding left. */
  fileUnchanged: boolean;
}

export async function runReadOnlyScenario(path: string): Promise<ReadOnlyOutcome> {
  const bytes = readFileSync(path);
  const { store, warnings } = openToolCache(path);
  const names = async () => (await store.get('echo', HASH))?.tools.map((tool) => tool.name) ?? null;
  const before = await names();
  let putThrew: string | null = null;
  try {
    await store.put('echo', HASH, [{ name: 'replaced', inputSchema: { type: 'object' } }]);
    await store.put('other', HASH, TOOLS);
    await store.delete('echo');
  } catch (err) {
    putThrew = String(err);
  }
  const after = await names();
  await store.close();
  return {
    uid: process.getuid?.() ?? null,
    warnings,
    store: store instanceof NoopToolCacheStore ? 'noop' : 'sqlite',
    before,
    after,
    putThrew,
    fileUnchanged: readFileSync(path).equals(bytes),
  };
}
