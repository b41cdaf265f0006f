/**
 * `node --import tsx bench/idle-breakdown.ts [cli.js …]` (default dist/cli.js): what an idle daemon's
 * resident set is made of (issue #44 item 3). For each build, a daemon with no servers, read like
 * B6 (1 s after `ready`, after full GCs), and beside them bare node with the same flags (the floor):
 * /proc/<pid>/smaps summed by what each mapping is, and V8's heap spaces (physical sizes).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startServe, type HeapAfterGc } from './lib/serve.js';

const SETTLE_MS = 1000;
const GC_PRELOAD = fileURLToPath(new URL('./lib/gc-preload.mjs', import.meta.url));
const NODE = realpathSync(process.execPath);
const MIB = 2 ** 20;

type Parts = Record<string, number>;

/** Resident bytes of `pid` by kind of mapping (node's code and read-only data, anonymous, malloc, addons, libraries). */
function smapsParts(pid: number): Parts {
  const parts: Parts = {};
  let kind = 'other';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const [, perms = '', path = ''] = mapping;
      if (path === NODE) kind = perms.includes('x') ? "node's code" : "node's data";
      else if (path === '') kind = 'anonymous (V8 heap, …)';
      else if (path === '[heap]') kind = 'malloc ([heap])';
      else if (path.endsWith('.node')) kind = 'native addons';
      else if (path.startsWith('/')) kind = 'shared libraries';
      else kind = 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) parts[kind] = (parts[kind] ?? 0) + Number(rss[1]) * 1024;
  }
  return parts;
}

interface Reading {
  label: string;
  parts: Parts;
  heap: HeapAfterGc;
}

/** Bare node idling with the daemon's memory flags and the same preload: the floor. */
async function bareNode(): Promise<Reading> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', GC_PRELOAD, '-e', 'setInterval(() => {}, 1e9)'], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const lines = createInterface({ input: child.stderr! });
    await sleep(SETTLE_MS);
    const done = new Promise<HeapAfterGc>((resolveHeap) =>
      lines.on('line', (line) => line.startsWith('bench-gc-done ') && resolveHeap(JSON.parse(line.slice('bench-gc-done '.length)) as HeapAfterGc)),
    );
    child.kill('SIGUSR2');
    const heap = await done;
    return { label: 'bare node', parts: smapsParts(child.pid!), heap };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'close');
  }
}

async function idleDaemon(cli: string): Promise<Reading> {
  const serve = await startServe({ servers: {}, exposeGc: true, cli });
  try {
    await serve.listening;
    await serve.waitForLog((entry) => entry.msg === 'ready');
    await sleep(SETTLE_MS);
    let heap = await serve.gc();
    for (let i = 0; i < 2; i++) heap = await serve.gc();
    return { label: cli, parts: smapsParts(serve.pid), heap };
  } finally {
    await serve.stop();
  }
}

const clis = (process.argv.length > 2 ? process.argv.slice(2) : ['dist/cli.js']).map((cli) => resolve(cli));
const readings = [await bareNode()];
for (const cli of clis) readings.push(await idleDaemon(cli));

const mib = (bytes: number | undefined): string => ((bytes ?? 0) / MIB).toFixed(1);
const kinds = [...new Set(readings.flatMap((r) => Object.keys(r.parts)))].sort();
const rows: Array<[string, ...string[]]> = [
  ...kinds.map((kind): [string, ...string[]] => [kind, ...readings.map((r) => mib(r.parts[kind]))]),
  ['**total (smaps)**', ...readings.map((r) => mib(Object.values(r.parts).reduce((a, b) => a + b, 0)))],
  ['V8 heap used / total', ...readings.map((r) => `${mib(r.heap.heapUsed)} / ${mib(r.heap.heapTotal)}`)],
  ...['new_space', 'old_space', 'code_space', 'large_object_space'].map((space): [string, ...string[]] => [
    `— ${space} (physical)`,
    ...readings.map((r) => mib(r.heap.spaces[space])),
  ]),
  ['external / arrayBuffers', ...readings.map((r) => `${mib(r.heap.external)} / ${mib(r.heap.arrayBuffers)}`)],
];
console.log(`| MiB | ${readings.map((r) => r.label).join(' | ')} |`);
console.log(`|---|${readings.map(() => '---:').join('|')}|`);
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
