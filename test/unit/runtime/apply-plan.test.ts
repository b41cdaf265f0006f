import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ReconcilePlan } from '../../../src/config/reconcile-plan.js';
import type { DiscoveryResult, ServerConfig, ServerSource } from '../../../src/config/types.js';
import { appliedOf, applyPlan, discoveryAsApplied } from '../../../src/runtime/apply-plan.js';
import type { ServerError } from '../../../src/upstream/manager.js';

/**
 * How a reconcile plan moves the manager (through its public operations only, so a manager of
 * the test's own that records each call stands in for it), and what `/status` shows once applied.
 */

const fileA: ServerSource = { provider: 'cursor', providerName: 'Cursor', path: '/h/.cursor/mcp.json', level: 'user' };
const fileB: ServerSource = { provider: 'gemini', providerName: 'Gemini CLI', path: '/h/.gemini/settings.json', level: 'user' };
const entry = (command: string, source = fileA) => ({ config: { command } as ServerConfig, source });

/** A manager that runs `running`, records every call in order, and fails the disconnects named in `failing`. */
function recordingManager(running: string[], { failing = [] as string[], errors = [] as ServerError[] } = {}) {
  const calls: string[] = [];
  const connected: Array<{ configs: object; sources: object; options: object }> = [];
  const manager = {
    hasServer: (name: string) => running.includes(name),
    disconnectServer: async (name: string) => {
      calls.push(`disconnect ${name}`);
      if (failing.includes(name)) throw new Error(`${name} would not stop`);
    },
    forgetServer: (name: string) => void calls.push(`forget ${name}`),
    connectServers: async (configs: Record<string, ServerConfig>, sources: Record<string, ServerSource> = {}, options = {}) => {
      calls.push(`connect ${Object.keys(configs).join(',')}`);
      connected.push({ configs, sources, options });
      return { errors };
    },
  };
  return { manager, calls, connected };
}

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  return { log: pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

const plan: ReconcilePlan = {
  added: ['fresh'],
  removed: ['gone', 'never-started'],
  changed: ['edited'],
  unchanged: ['same'],
  kept: [],
  next: { fresh: entry('fresh', fileB), edited: entry('edited v2'), same: entry('same') },
};

describe('applyPlan', () => {
  it('disconnects the removed and changed servers the manager has, forgets the removed, then connects the named ones', async () => {
    const { manager, calls, connected } = recordingManager(['gone', 'edited', 'same']);
    const { log, lines } = capturedLogger();
    // `missing` is not in the plan's next config: there is nothing to connect it with.
    expect(await applyPlan(manager, plan, ['edited', 'missing', 'fresh'], log)).toEqual([]);
    expect(calls).toEqual(['disconnect gone', 'disconnect edited', 'forget gone', 'forget never-started', 'connect edited,fresh']);
    expect(connected).toEqual([
      { configs: { edited: { command: 'edited v2' }, fresh: { command: 'fresh' } }, sources: { edited: fileA, fresh: fileB }, options: { cause: 'reload' } },
    ]);
    expect(lines).toEqual([]);
  });

  it('logs a disconnect that fails, carries on, and returns the connect failures', async () => {
    const failure: ServerError = { server: 'fresh', error: { code: 'UPSTREAM_CONNECT_FAILED', message: 'spawn fresh ENOENT' } };
    const { manager, calls } = recordingManager(['gone', 'edited'], { failing: ['edited'], errors: [failure] });
    const { log, lines } = capturedLogger();
    expect(await applyPlan(manager, plan, ['edited', 'fresh'], log)).toEqual([failure]);
    expect(calls).toEqual(['disconnect gone', 'disconnect edited', 'forget gone', 'forget never-started', 'connect edited,fresh']);
    expect(lines).toMatchObject([{ level: 40, err: 'edited would not stop', msg: 'disconnect failed' }]);
  });
});

describe('discoveryAsApplied', () => {
  it('shows the configs that run, and warns once for each server kept on its last good config', () => {
    const discovery: DiscoveryResult = {
      configs: { fresh: { command: 'fresh' } },
      sources: { fresh: fileB },
      shadowed: [],
      skipped: [],
      warnings: [{ message: `${fileA.path}: Unexpected token`, path: fileA.path, line: 3, column: 7 }],
      exaApiKeys: [],
      failedFiles: [fileA.path],
    };
    const applied = { fresh: entry('fresh', fileB), edited: entry('edited') };
    const shown = discoveryAsApplied(discovery, applied, ['edited']);
    expect(shown.configs).toEqual({ fresh: { command: 'fresh' }, edited: { command: 'edited' } });
    expect(shown.sources).toEqual({ fresh: fileB, edited: fileA });
    expect(shown.failedFiles).toEqual([fileA.path]);
    expect(shown.warnings).toEqual([
      discovery.warnings[0],
      { message: `${fileA.path}: server "edited" keeps its last good config until the file is valid again`, path: fileA.path, server: 'edited' },
    ]);
    // The discovery itself is left as it was.
    expect(discovery.warnings).toHaveLength(1);
  });
});

describe('appliedOf', () => {
  it('pairs each config with its source, and a config without one with the API placeholder', () => {
    expect(appliedOf({ a: { command: 'a' }, b: { url: 'http://127.0.0.1:9/mcp' } }, { a: fileA })).toEqual({
      a: { config: { command: 'a' }, source: fileA },
      b: { config: { url: 'http://127.0.0.1:9/mcp' }, source: { provider: 'api', providerName: 'API', path: '', level: 'native' } },
    });
  });
});
