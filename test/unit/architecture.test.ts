import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCircles, importGraph, sourceFiles } from '../helpers/import-graph.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

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
  { name: 'daemon', owns: (f) => f === 'daemon.ts' || f === 'index.ts' },
  { name: 'cli', owns: (f) => f === 'cli.ts' || f === 'watchdog.ts' || f.startsWith('cli/') },
];

function layerOf(file: string): number {
  const index = LAYERS.findIndex((layer) => layer.owns(file));
  if (index < 0) throw new Error(`${file} belongs to no layer of docs/architecture.md`);
  return index;
}

describe('the shape of src/ (docs/architecture.md)', () => {
  const graph = importGraph(SRC);

  it('has no import circles, type-only imports included', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('never imports from a higher layer', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) if (layerOf(target) > layerOf(file)) upward.push(`${file} → ${target}`);
    }
    expect(upward).toEqual([]);
  });

  it('keeps every file at 300 lines or fewer', () => {
    const long = sourceFiles(SRC)
      .map((file) => ({ file, lines: readFileSync(`${SRC}${file}`, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 300);
    expect(long).toEqual([]);
  });

  it('finds a circle and an upward import when there is one (the checks can fail)', () => {
    const made = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts']],
      ['c.ts', []],
    ]);
    expect(importCircles(made)).toEqual([['a.ts', 'b.ts']]);
    expect(layerOf('store/db.ts')).toBeLessThan(layerOf('config/load.ts'));
  });
});
