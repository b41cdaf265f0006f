import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CLI_METAFILE } from '../helpers/build-fixtures.js';

/**
 * The CLI bundle (scripts/bundle.mjs, built by the test setup exactly as `npm start` builds it):
 * what `switchboard serve` compiles before it listens, and what waits for first use.
 */

const meta = JSON.parse(readFileSync(CLI_METAFILE, 'utf8')) as Metafile;
const outputs = Object.entries(meta.outputs).filter(([path]) => path.endsWith('.js'));
const byName = new Map(outputs.map(([path, output]) => [basename(path), output]));

/** Every module in `chunk` and in what it imports statically, transitively. */
function staticModules(chunk: string): string[] {
  const seen = new Set<string>();
  const modules: string[] = [];
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const output = byName.get(name);
    if (!output) return;
    modules.push(...Object.keys(output.inputs));
    for (const imported of output.imports) if (imported.kind === 'import-statement') visit(basename(imported.path));
  };
  visit(chunk);
  return modules;
}

const serveChunk = outputs.map(([path]) => basename(path)).find((name) => /^serve-/.test(name));
// The SDK v2 client package (one module with the protocol's zod schemas) loads with the first
// connection or the first /mcp request (src/upstream/sdk.ts), the server side with /mcp.
// prom-client (the process metrics) waits for the first scrape of /metrics; node-postgres for a
// PostgreSQL store or a cluster; the CEL policy language for a config with `policies`, and ws for
// the first WebSocket upgrade (scripts/bundle.mjs's stand-in for @fastify/websocket's; issue #44).
const LAZY = [
  /@marcbachmann\/cel-js\//,
  /node_modules\/ws\//,
  /node_modules\/pg\//,
  /@modelcontextprotocol\/client\//,
  /@modelcontextprotocol\/core\//,
  /@modelcontextprotocol\/server\//,
  /@modelcontextprotocol\/node\//,
  /@hono\/node-server/,
  /src\/http\/routes\/mcp\.ts/,
  /prom-client\//,
];

describe('the CLI bundle', () => {
  it('does not load the /mcp server side before serving', () => {
    expect(serveChunk).toBeDefined();
    const eager = [...staticModules('cli.js'), ...staticModules(serveChunk!)];
    expect(eager).toContain('src/http/app.ts');
    for (const pattern of LAZY)
      expect(
        eager.filter((m) => pattern.test(m)),
        String(pattern),
      ).toEqual([]);
    // …but they are in the bundle, behind a dynamic import.
    const all = outputs.flatMap(([, output]) => Object.keys(output.inputs));
    for (const pattern of LAZY)
      expect(
        all.some((m) => pattern.test(m)),
        String(pattern),
      ).toBe(true);
  });

  it('leaves duplexify and readable-stream out: @fastify/websocket needs them only for injectWS, which the CLI never calls', () => {
    const all = outputs.flatMap(([, output]) => Object.keys(output.inputs));
    expect(all.filter((m) => /node_modules\/(duplexify|readable-stream)\//.test(m))).toEqual([]);
    expect(all.some((m) => m.endsWith('node_modules/@fastify/websocket/index.js'))).toBe(true);
  });

  it("carries zod's English messages only, not its 48 locales", () => {
    const all = outputs.flatMap(([, output]) => Object.keys(output.inputs));
    const locales = all.filter((m) => /zod\/v4\/locales\/(?!index\.js$)/.test(m));
    expect(locales.map((m) => basename(m))).toEqual(['en.js']);
  });

  it("is ASCII throughout, so V8 keeps each chunk's source as a one-byte string", () => {
    // The metafile names its outputs relative to the repository (esbuild's working directory).
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const wide = outputs.map(([path]) => path).filter((path) => /[\u0080-\uffff]/.test(readFileSync(join(root, path), 'utf8')));
    expect(outputs.length).toBeGreaterThan(10);
    expect(wide).toEqual([]);
  });

  it("is minified (whitespace and syntax, names kept): V8 keeps every chunk's source for the life of the process", () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const source = readFileSync(join(root, outputs.find(([path]) => basename(path) === serveChunk)![0]), 'utf8');
    // Unminified, a line averages ~40 bytes (indentation, one statement, comments).
    expect(source.split('\n').length).toBeLessThan(source.length / 1000);
    // Identifiers are not minified: stack traces name functions as the sources do.
    expect(source).toContain('function createDaemon(');
  });

  it('builds the child watchdog as an entry of its own that loads only the /proc helpers', () => {
    expect(byName.has('watchdog.js')).toBe(true);
    const modules = staticModules('watchdog.js');
    expect(modules).toContain('src/watchdog.ts');
    // No dependency, none of the daemon: it must start as fast as node itself.
    const allowed = (m: string): boolean => m === 'src/watchdog.ts' || m === 'src/upstream/process/leftovers.ts' || m.startsWith('src/util/');
    expect(modules.filter((m) => !allowed(m))).toEqual([]);
  });

  it("keeps only the native addons (better-sqlite3; ws's and pg's optional ones) outside the bundle", () => {
    const builtin = (path: string): boolean => path.startsWith('node:') || builtinModules.includes(path.split('/')[0]!);
    const external = new Set(outputs.flatMap(([, output]) => output.imports.filter((i) => i.external && !builtin(i.path)).map((i) => i.path)));
    expect(external).toContain('better-sqlite3');
    // pg-native: node-postgres requires it only for `pg.native`, which Switchboard never uses.
    for (const path of external) expect(['better-sqlite3', 'bufferutil', 'utf-8-validate', 'pg-native']).toContain(path);
  });

  it('starts a client command without the config schema, zod or the SDK client', () => {
    // status, tools, call, agents, …: each reads a path and talks HTTP to the daemon (issue #44).
    const commands = ['status', 'tools', 'call', 'agents', 'approvals', 'reload'].map((name) => outputs.map(([path]) => basename(path)).find((n) => n.startsWith(`${name}-`)));
    for (const command of commands) {
      expect(command).toBeDefined();
      const eager = [...staticModules('cli.js'), ...staticModules(command!)];
      expect(
        eager.filter((m) => /node_modules\/(zod|@marcbachmann\/cel-js|@modelcontextprotocol)\/|src\/config\/(schema|load)\.ts/.test(m)),
        command,
      ).toEqual([]);
    }
  });
});
