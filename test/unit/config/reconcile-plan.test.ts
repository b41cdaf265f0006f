import { describe, expect, it } from 'vitest';
import { planReconcile, type AppliedServers } from '../../../src/config/reconcile-plan.js';
import type { DiscoveryResult, ServerConfig, ServerSource } from '../../../src/config/types.js';

const fileA: ServerSource = { provider: 'cursor', providerName: 'Cursor', path: '/h/.cursor/mcp.json', level: 'user' };
const fileB: ServerSource = { provider: 'gemini', providerName: 'Gemini CLI', path: '/h/.gemini/settings.json', level: 'user' };

function discovery(servers: Record<string, [ServerConfig, ServerSource]>, extra: Partial<DiscoveryResult> = {}): DiscoveryResult {
  return {
    configs: Object.fromEntries(Object.entries(servers).map(([name, [config]]) => [name, config])),
    sources: Object.fromEntries(Object.entries(servers).map(([name, [, source]]) => [name, source])),
    shadowed: [],
    skipped: [],
    warnings: [],
    exaApiKeys: [],
    ...extra,
  };
}

const applied: AppliedServers = {
  same: { config: { command: 'same', args: ['x'] }, source: fileA },
  edited: { config: { command: 'edited' }, source: fileA },
  gone: { config: { command: 'gone' }, source: fileB },
};

describe('planReconcile', () => {
  it('sorts servers into added, removed, changed (by config hash) and unchanged', () => {
    const plan = planReconcile(
      applied,
      discovery({
        // Same config with keys in another order: the hash is the same.
        same: [{ args: ['x'], command: 'same' }, fileA],
        edited: [{ command: 'edited', excludeTools: ['rm'] }, fileA],
        fresh: [{ command: 'fresh' }, fileB],
      }),
    );
    expect(plan).toMatchObject({ added: ['fresh'], removed: ['gone'], changed: ['edited'], unchanged: ['same'], kept: [] });
    expect(Object.keys(plan.next).sort()).toEqual(['edited', 'fresh', 'same']);
  });

  it('keeps the last good config of servers whose file failed or whose entry became invalid', () => {
    const plan = planReconcile(
      applied,
      // fileA cannot be parsed: it yields nothing, yet its servers stay as they were; the entry of
      // `gone` in fileB is now invalid (say, an `${input:…}` was added): it keeps running as it was.
      discovery({}, { failedFiles: [fileA.path], invalid: [{ name: 'gone', path: fileB.path }] }),
    );
    expect(plan).toMatchObject({ added: [], removed: [], changed: [], unchanged: ['edited', 'gone', 'same'], kept: ['edited', 'gone', 'same'] });
    expect(plan.next.gone).toBe(applied.gone);
  });

  it('an invalid entry in another file does not keep a server that was deleted from its own', () => {
    const plan = planReconcile(applied, discovery({}, { invalid: [{ name: 'gone', path: fileA.path }] }));
    expect(plan.removed).toEqual(['edited', 'gone', 'same']);
    expect(plan.kept).toEqual([]);
  });
});
