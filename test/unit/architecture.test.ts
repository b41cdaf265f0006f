import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { folderGraph, importCircles, importGraph, sourceFiles, subFolderOf } from '../helpers/import-graph.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const UNIT = fileURLToPath(new URL('./', import.meta.url));

type Graph = Map<string, string[]>;

/**
 * The layers of docs/architecture.md, lowest first: a file may import from its own layer and
 * the ones below, never from one above.
 */
const LAYERS: Array<{ name: string; owns: (file: string) => boolean }> = [
  { name: 'base', owns: (f) => f === 'errors.ts' || f === 'logger.ts' || f === 'log-pretty.ts' || f.startsWith('util/') },
  { name: 'store', owns: (f) => f.startsWith('store/') },
  { name: 'config', owns: (f) => f.startsWith('config/') },
  { name: 'telemetry', owns: (f) => f.startsWith('telemetry/') },
  { name: 'events', owns: (f) => f.startsWith('events/') },
  { name: 'upstream', owns: (f) => f.startsWith('upstream/') },
  { name: 'gateway', owns: (f) => f.startsWith('gateway/') },
  { name: 'runtime', owns: (f) => f.startsWith('runtime/') },
  { name: 'cluster', owns: (f) => f.startsWith('cluster/') },
  { name: 'http', owns: (f) => f.startsWith('http/') },
  { name: 'daemon', owns: (f) => f === 'daemon.ts' || f === 'loader.ts' || f === 'index.ts' },
  { name: 'cli', owns: (f) => f === 'cli.ts' || f === 'watchdog.ts' || f.startsWith('cli/') },
];

/**
 * The sub-folders of a layer that are ordered too (docs/architecture.md), lowest first. A
 * sub-folder imports from itself and those before it. A root file named here (`sdk.ts`) has a
 * rank of its own; `(root)` stands for the folder's other files. Every file of an ordered folder
 * has a rank: a root file neither named nor covered by `(root)` is an error, as a new sub-folder is.
 */
const SUB_FOLDER_ORDERS: Record<string, string[]> = {
  // The SDK loader and the instance tree are read by the sub-folders; the manager and its parts
  // (options, the startup gate, the server snapshot) read them all.
  upstream: ['sdk.ts', 'instance.ts', 'process', 'oauth', 'transport', 'catalogue', 'server', '(root)'],
  gateway: ['agents', 'approvals', 'audit', 'policies', 'results', 'lists', 'scripts', 'requests', 'tasks', '(root)'],
};

/** The gateway's face: the only agent-side files `http/` may import (docs/architecture.md). */
const GATEWAY_FACE = ['gateway/index.ts'];

/**
 * Files over the 300-line norm, each with why it is one file. A file grows onto this list by a
 * reviewed change, never by squeezing lines (STYLE: no arrow-valued fields or joined lines to fit).
 */
const LONG_FILES: Record<string, string> = {
  'daemon.ts': 'the one composition root: every part is built here, in order, so the daemon reads top to bottom in one place (issue #34, item 4)',
  'gateway/agents/agent-registry.ts':
    'the one table of agents, keys and the operator key that authentication reads in one step; its add, rotate and revoke keep the three consistent together',
  'gateway/requests/request-router.ts':
    'one switch over the request kinds (call, get, read, complete, subscribe, setLevel) with the view check beside each; split per kind it would scatter the view rules',
  'upstream/manager.ts': 'owns the upstreams and catalogues and is the one writer of both; its methods are the upstream side the runtime drives',
};
const MAX_LINES = 300;

function layerOf(file: string): number {
  const index = LAYERS.findIndex((layer) => layer.owns(file));
  if (index < 0) throw new Error(`${file} belongs to no layer of docs/architecture.md`);
  return index;
}

/** Imports from a file's layer to a higher one. */
function upwardImports(graph: Graph): string[] {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) if (layerOf(target) > layerOf(file)) upward.push(`${file} → ${target}`);
  }
  return upward;
}

/** Imports from a sub-folder to a later one in its folder's order (SUB_FOLDER_ORDERS). */
function upwardSubFolderImports(graph: Graph, orders: Record<string, string[]>): string[] {
  const rank = (file: string): { folder: string; index: number } | undefined => {
    const sub = subFolderOf(file);
    const [folder, name] = sub.split('/') as [string, string];
    const order = orders[folder];
    if (!order) return undefined;
    // A root file by its own name first, else as one of the folder's other root files.
    const own = name === '(root)' ? order.indexOf(file.slice(folder.length + 1)) : -1;
    const index = own >= 0 ? own : order.indexOf(name);
    if (index < 0) throw new Error(`${name === '(root)' ? file : sub} is in no order of docs/architecture.md`);
    return { folder, index };
  };
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    const from = rank(file);
    if (!from) continue;
    for (const target of targets) {
      const to = rank(target);
      if (to && to.folder === from.folder && to.index > from.index) upward.push(`${file} → ${target}`);
    }
  }
  return upward;
}

/** Imports from `http/` into the gateway past its face. */
function pastTheFace(graph: Graph): string[] {
  const past: string[] = [];
  for (const [file, targets] of graph) {
    if (!file.startsWith('http/')) continue;
    for (const target of targets) if (target.startsWith('gateway/') && !GATEWAY_FACE.includes(target)) past.push(`${file} → ${target}`);
  }
  return past;
}

/** Files over MAX_LINES that the allowlist does not name, and allowlisted files no longer over it. */
function sizeFindings(lengths: Map<string, number>, allowed: Record<string, string>): string[] {
  const findings: string[] = [];
  for (const [file, lines] of lengths) {
    if (lines > MAX_LINES && !allowed[file]) findings.push(`${file}: ${lines} lines, not on the allowlist`);
  }
  for (const file of Object.keys(allowed)) {
    const lines = lengths.get(file);
    if (lines === undefined || lines <= MAX_LINES) findings.push(`${file}: on the allowlist but ${lines ?? 'gone'}; drop it from the list`);
  }
  return findings;
}

/**
 * Folders of `test/unit/` holding tests whose path is no folder of `src/` (docs/architecture.md,
 * "Where the tests live"): a unit test sits at its module's path. A folder of helpers only (the
 * store's contracts) holds no test and is not asked.
 */
function strayTestFolders(unit: string, isSrcFolder: (folder: string) => boolean): string[] {
  const stray: string[] = [];
  const walk = (folder: string): void => {
    const entries = readdirSync(`${unit}${folder}`, { withFileTypes: true });
    if (folder !== '' && entries.some((e) => e.isFile() && e.name.endsWith('.test.ts')) && !isSrcFolder(folder)) stray.push(folder);
    for (const entry of entries) if (entry.isDirectory()) walk(folder === '' ? entry.name : `${folder}/${entry.name}`);
  };
  walk('');
  return stray;
}

/** The sub-folder graph counts true sub-folders only: a folder's root files compose its sub-folders. */
function subFolderCircles(graph: Graph): string[][] {
  const folders = folderGraph(graph);
  for (const [sub, targets] of folders) {
    if (sub.endsWith('/(root)')) folders.delete(sub);
    else
      folders.set(
        sub,
        targets.filter((target) => !target.endsWith('/(root)')),
      );
  }
  return importCircles(folders);
}

describe('the shape of src/ (docs/architecture.md)', () => {
  const graph = importGraph(SRC);

  it('has no import circles between files, type-only imports included', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('has no import circles between sub-folders', () => {
    expect(subFolderCircles(graph)).toEqual([]);
  });

  it('never imports from a higher layer', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('never imports from a later sub-folder of the upstream side or the gateway', () => {
    expect(upwardSubFolderImports(graph, SUB_FOLDER_ORDERS)).toEqual([]);
  });

  it('reaches the gateway from http/ only through its face', () => {
    expect(pastTheFace(graph)).toEqual([]);
  });

  it('keeps each unit test in the folder of src/ its module is in', () => {
    expect(strayTestFolders(UNIT, (folder) => existsSync(`${SRC}${folder}`))).toEqual([]);
  });

  it(`keeps every file at ${MAX_LINES} lines or fewer, or on the allowlist with its reason`, () => {
    const lengths = new Map(sourceFiles(SRC).map((file) => [file, readFileSync(`${SRC}${file}`, 'utf8').split('\n').length - 1]));
    expect(sizeFindings(lengths, LONG_FILES)).toEqual([]);
  });

  describe('each check can fail', () => {
    it('finds a circle between files', () => {
      const made: Graph = new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', ['a.ts']],
        ['c.ts', []],
      ]);
      expect(importCircles(made)).toEqual([['a.ts', 'b.ts']]);
    });

    it('finds a circle between sub-folders that no two files make', () => {
      const made: Graph = new Map([
        ['upstream/transport/a.ts', ['upstream/process/b.ts']],
        ['upstream/process/c.ts', ['upstream/transport/d.ts']],
        ['upstream/process/b.ts', []],
        ['upstream/transport/d.ts', []],
        ['upstream/manager.ts', ['upstream/process/b.ts']],
        ['upstream/process/e.ts', ['upstream/instance.ts']],
        ['upstream/instance.ts', []],
      ]);
      expect(importCircles(made)).toEqual([]);
      expect(subFolderCircles(made)).toEqual([['upstream/process', 'upstream/transport']]);
    });

    it('finds an upward import between layers', () => {
      expect(
        upwardImports(
          new Map([
            ['store/db.ts', ['config/load.ts']],
            ['config/load.ts', ['store/db.ts']],
          ]),
        ),
      ).toEqual(['store/db.ts → config/load.ts']);
      expect(() => upwardImports(new Map([['stray.ts', ['util/clock.ts']]]))).toThrow(/belongs to no layer/);
    });

    it('finds an upward import between sub-folders, root files ranked too', () => {
      const made: Graph = new Map([
        ['upstream/process/a.ts', ['upstream/transport/b.ts']],
        ['upstream/transport/b.ts', ['upstream/process/c.ts', 'upstream/instance.ts', 'upstream/sdk.ts']],
        ['gateway/agents/d.ts', ['gateway/gateway.ts']],
        // A named root file below the sub-folders, and the rest of the root above them.
        ['upstream/sdk.ts', ['upstream/oauth/e.ts']],
        ['upstream/server/f.ts', ['upstream/startup-gate.ts']],
        ['upstream/manager.ts', ['upstream/server/f.ts', 'upstream/sdk.ts']],
      ]);
      expect(upwardSubFolderImports(made, SUB_FOLDER_ORDERS)).toEqual([
        'upstream/process/a.ts → upstream/transport/b.ts',
        'gateway/agents/d.ts → gateway/gateway.ts',
        'upstream/sdk.ts → upstream/oauth/e.ts',
        'upstream/server/f.ts → upstream/startup-gate.ts',
      ]);
      expect(() => upwardSubFolderImports(new Map([['upstream/newroom/a.ts', []]]), SUB_FOLDER_ORDERS)).toThrow(/in no order/);
      expect(() =>
        upwardSubFolderImports(
          new Map([
            ['cli/a.ts', []],
            ['x/y.ts', []],
          ]),
          { x: ['z'] },
        ),
      ).toThrow(/x\/y.ts is in no order/);
    });

    it('finds an http/ import past the gateway face', () => {
      const made: Graph = new Map([
        ['http/routes/a.ts', ['gateway/index.ts', 'gateway/agents/agent-registry.ts']],
        ['runtime/b.ts', ['gateway/agents/agent-registry.ts']],
      ]);
      expect(pastTheFace(made)).toEqual(['http/routes/a.ts → gateway/agents/agent-registry.ts']);
    });

    it('finds a test folder that mirrors no folder of src/', () => {
      const srcFolders = new Set(['http', 'http/guards', 'store']);
      expect(strayTestFolders(UNIT, (folder) => srcFolders.has(folder))).toContain('gateway/tasks');
      expect(strayTestFolders(UNIT, (folder) => srcFolders.has(folder))).not.toContain('http/guards');
      // The store's contracts are helpers only: no test there, so no question asked.
      expect(strayTestFolders(UNIT, () => false)).not.toContain('store/contracts');
    });

    it('finds a long file off the allowlist and a stale allowlist entry', () => {
      const lengths = new Map([
        ['a.ts', 301],
        ['b.ts', 300],
        ['c.ts', 290],
      ]);
      expect(sizeFindings(lengths, { 'c.ts': 'was long' })).toEqual(['a.ts: 301 lines, not on the allowlist', 'c.ts: on the allowlist but 290; drop it from the list']);
    });
  });
});
