/**
 * Runs the official conformance suite (`@modelcontextprotocol/conformance`, server mode) against
 * Switchboard's `/mcp` aggregating the suite's reference everything-server, once per `protocol`
 * setting, and prints the pass counts per spec revision × setting (issue #21). Not part of
 * `npm test`. See bench/conformance/README.md for the set-up (the suite from npm, the server's
 * source from the suite's repository).
 *
 *   node --import tsx bench/conformance/run-server.ts [auto,legacy,modern] [2025-11-25,2026-07-28]
 *
 * Env: CONFORMANCE (the suite's command), EVERYTHING_SERVER (path of everything-server.ts, run with
 * tsx from its own folder so it finds the suite's @modelcontextprotocol/sdk v1, express and cors),
 * VERBOSE=1 (the suite's own output), SERVE=1 (keep the daemon of the first setting up and print
 * its URL), DIRECT=1 (also run against the server alone, as a baseline).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerConfig } from '../../src/config/types.js';
import { oneUpstreamDaemon } from './one-upstream-daemon.js';

type Protocol = 'auto' | 'legacy' | 'modern';
const SERVER = 'everything';
const WAIT_MS = 20_000;
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const conformance = (
  process.env.CONFORMANCE ?? `node --import ${join(repo, 'bench/conformance/glob-shim.mjs')} /tmp/conf/node_modules/@modelcontextprotocol/conformance/dist/index.js`
).split(' ');
const everything = process.env.EVERYTHING_SERVER ?? '/tmp/conf/everything-server.ts';
const protocols = (process.argv[2] ?? 'auto,legacy,modern').split(',') as Protocol[];
const revisions = (process.argv[3] ?? '2025-11-25,2026-07-28').split(',');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Starts the everything-server and resolves once it says it listens. */
async function startEverything(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(join(repo, 'node_modules/.bin/tsx'), [everything], {
    cwd: dirname(everything),
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('everything-server did not start')), WAIT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('running on')) {
        clearTimeout(timer);
        done();
      }
    });
    child.once('exit', (code) => fail(new Error(`everything-server exited (${code})`)));
  });
  child.stdout?.resume();
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

interface Outcome {
  passed: number;
  total: number;
  failing: string[];
}

/** One suite run; counts scored scenarios (the "Not scored" block is left out). */
async function runSuite(url: string, revision: string): Promise<Outcome> {
  const [cmd, ...args] = conformance as [string, ...string[]];
  const child = spawn(cmd, [...args, 'server', '--url', url, '--requirements', revision], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((done) => child.once('close', done));
  if (process.env.VERBOSE) process.stdout.write(out);
  const scored = out.split('Not scored')[0] ?? out;
  const notScored = out.split('Not scored')[1] ?? '';
  const unscoredNames = new Set([...notScored.matchAll(/[✓✗] ([\w-]+) \(/g)].map((m) => m[1]));
  const lines = [...scored.matchAll(/^([✓✗]) ([\w-]+): \d+ passed, \d+ failed/gm)].filter((m) => !unscoredNames.has(m[2]));
  const failing = lines.filter((m) => m[1] === '✗').map((m) => m[2] ?? '');
  const unscoredFailing = [...notScored.matchAll(/✗ ([\w-]+) \(/g)].map((m) => `${m[1]} (not scored)`);
  return { passed: lines.length - failing.length, total: lines.length, failing: [...failing, ...unscoredFailing] };
}

async function throughSwitchboard(protocol: Protocol, upstreamUrl: string): Promise<Map<string, Outcome>> {
  const upstream: ServerConfig = { type: 'http', url: upstreamUrl, toolPrefix: '', protocol };
  const { daemon, dir, host } = await oneUpstreamDaemon(SERVER, upstream);

  const results = new Map<string, Outcome>();
  try {
    await daemon.app.listen({ host, port: 0 });
    await daemon.start();
    const status = daemon.manager.getServer(SERVER)?.status;
    if (status !== 'connected') throw new Error(`upstream is ${status}`);
    const url = `http://127.0.0.1:${(daemon.app.server.address() as AddressInfo).port}/mcp`;
    if (process.env.SERVE) {
      // Debugging: keep the daemon up for manual runs of the suite (one --scenario at a time).
      process.stderr.write(`serving ${url} (protocol ${protocol}); Ctrl-C to stop\n`);
      await new Promise((done) => process.once('SIGINT', done));
    } else for (const revision of revisions) results.set(revision, await runSuite(url, revision));
  } finally {
    await daemon.close();
    await rm(dir, { recursive: true, force: true });
  }
  return results;
}

const rows: string[] = [];
const report = (label: string, revision: string, outcome: Outcome): void => {
  const line = `${label.padEnd(22)} ${revision}  ${outcome.passed}/${outcome.total}${outcome.failing.length ? `  failing: ${outcome.failing.join(', ')}` : ''}`;
  rows.push(line);
  process.stderr.write(`${line}\n`);
};
const { url, child } = await startEverything();
try {
  if (process.env.DIRECT) for (const revision of revisions) report('server alone', revision, await runSuite(url, revision));
  for (const protocol of protocols) {
    for (const [revision, outcome] of await throughSwitchboard(protocol, url)) report(`switchboard ${protocol}`, revision, outcome);
  }
} finally {
  child.kill();
}
process.stdout.write(`\n${rows.join('\n')}\n`);
