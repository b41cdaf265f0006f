import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { describe, it, vi } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import type { ConfigChangedEvent } from '../../src/events/daemon-events.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { nextEvent, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { isProcessGone, readPidFile, tempDir, type Cleanup } from '../helpers/process.js';

/**
 * Live config (SPEC §8, issue #15): a real daemon with the real discovery over a temp HOME and
 * project, real client config files, real echo servers. Each server writes its pid to
 * `<home>/<name>.pid` (the path is written with `${userHome}`, so expansion is proven too):
 * a server that kept its connection kept its process.
 */

interface ServerView {
  name: string;
  status: string;
  connectedSince: string | null;
}

interface Tree {
  home: string;
  cwd: string;
  cursorFile: string;
}

async function tree(cleanup: Cleanup): Promise<Tree> {
  const home = await realpath(await tempDir(cleanup));
  const cwd = await realpath(await tempDir(cleanup));
  return { home, cwd, cursorFile: join(home, '.cursor', 'mcp.json') };
}

/** An echo server that records its pid in `<home>/<name>.pid`. */
function echo(name: string, extraEnv: Record<string, string> = {}): ServerConfig {
  return fixtureServerConfig('echo-stdio', { env: { PID_FILE: `\${userHome}/${name}.pid`, ...extraEnv } });
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, JSON.stringify(value, null, 2));
}

/** A reconcile answers once its servers are connected: no deferred tools from a warm cache. */
async function liveDaemon(t: Tree, cleanup: Cleanup, config: Record<string, unknown> = {}): Promise<TestDaemon> {
  return startDaemon({ realDiscovery: true, deps: { home: t.home, cwd: t.cwd, env: {} }, config: { startupGateMs: 60_000, ...config }, cleanup });
}

async function pidOf(t: Tree, name: string): Promise<number> {
  return (await readPidFile(join(t.home, `${name}.pid`))).pid;
}

async function server(d: TestDaemon, name: string): Promise<ServerView> {
  return (await d.json<ServerView>(`/servers/${name}`)).body;
}

async function toolServers(d: TestDaemon): Promise<string[]> {
  const { body } = await d.json<{ tools: Array<{ server: string }> }>('/tools');
  return [...new Set(body.tools.map((tool) => tool.server))].sort();
}

async function nextConfigChange(ws: WebSocket): Promise<ConfigChangedEvent> {
  return nextEvent(ws, 'config.changed') as Promise<ConfigChangedEvent>;
}

/**
 * Each test has its own HOME, project and daemon, and waits mostly on its echo servers' starts
 * and its watcher: they run side by side, three at a time (the cap is this file's: vitest resets
 * it after the file), registering their cleanups and asserting through their own context.
 */
vi.setConfig({ maxConcurrency: 3 });

describe.concurrent('live config', () => {
  it('applies edits, new files and deleted files, moving only the servers whose config moved', async ({ expect, onTestFinished }) => {
    const t = await tree(onTestFinished);
    await writeJson(t.cursorFile, { mcpServers: { a: echo('a'), b: echo('b') } });
    const d = await liveDaemon(t, onTestFinished);
    const ws = await openEvents(d.url);
    await nextEvent(ws, 'hello');
    expect(await toolServers(d)).toEqual(['a', 'b']);
    const a0 = { pid: await pidOf(t, 'a'), since: (await server(d, 'a')).connectedSince };
    const b0 = await pidOf(t, 'b');

    // Edit: b's env changes, c appears, a is untouched.
    const edited = Date.now();
    await writeJson(t.cursorFile, { mcpServers: { a: echo('a'), b: echo('b', { LEVEL: 'debug' }), c: echo('c') } });
    const edit = await nextConfigChange(ws);
    const editToTools = Date.now() - edited;
    expect(edit).toMatchObject({ cause: 'watch', files: [t.cursorFile], added: ['c'], removed: [], changed: ['b'], kept: [] });
    expect(await toolServers(d)).toEqual(['a', 'b', 'c']);
    expect(await pidOf(t, 'a')).toBe(a0.pid);
    expect((await server(d, 'a')).connectedSince).toBe(a0.since);
    expect(await pidOf(t, 'b')).not.toBe(b0);
    expect(isProcessGone(b0)).toBe(true);
    expect((await server(d, 'c')).status).toBe('connected');
    console.info(`config edit → new server's tools in GET /tools: ${editToTools} ms`);

    // A file of another client appears, in a directory that did not exist at start.
    await writeJson(join(t.cwd, '.vscode', 'mcp.json'), { servers: { v: { type: 'stdio', ...echo('v') } } });
    expect(await nextConfigChange(ws)).toMatchObject({ added: ['v'], removed: [], changed: [] });
    expect(await toolServers(d)).toEqual(['a', 'b', 'c', 'v']);

    // The Cursor file is deleted: its servers go, with their processes; v stays.
    const gone = await Promise.all(['a', 'b', 'c'].map((name) => pidOf(t, name)));
    const v = await pidOf(t, 'v');
    await rm(t.cursorFile);
    expect(await nextConfigChange(ws)).toMatchObject({ files: [t.cursorFile], added: [], removed: ['a', 'b', 'c'], changed: [] });
    expect(await toolServers(d)).toEqual(['v']);
    expect((await d.json('/servers/a')).status).toBe(404);
    for (const pid of gone) expect(isProcessGone(pid)).toBe(true);
    expect(await pidOf(t, 'v')).toBe(v);
  });

  it('keeps the last good servers when a file or an entry becomes invalid, and says why', async ({ expect, onTestFinished }) => {
    const t = await tree(onTestFinished);
    await writeJson(t.cursorFile, { mcpServers: { a: echo('a'), b: echo('b') } });
    const d = await liveDaemon(t, onTestFinished);
    const ws = await openEvents(d.url);
    await nextEvent(ws, 'hello');
    const a0 = await pidOf(t, 'a');
    const since = (await server(d, 'a')).connectedSince;

    // Half-saved JSON: nothing may stop.
    await writeFile(t.cursorFile, '{ "mcpServers": { "a": { "command": ');
    expect(await nextConfigChange(ws)).toMatchObject({ added: [], removed: [], changed: [], kept: ['a', 'b'] });
    const status = (await d.json<{ discovery: { warnings: Array<{ message: string; line?: number }> } }>('/status')).body;
    expect(status.discovery.warnings).toContainEqual(expect.objectContaining({ path: t.cursorFile, line: 1, message: expect.stringMatching(/invalid JSON/) }));
    expect(status.discovery.warnings).toContainEqual(expect.objectContaining({ server: 'a', message: expect.stringMatching(/keeps its last good config/) }));
    expect(await toolServers(d)).toEqual(['a', 'b']);

    // Valid again, but a's entry now needs an editor prompt: a keeps running, b is removed.
    await writeJson(t.cursorFile, { mcpServers: { a: echo('a', { TOKEN: '${input:token}' }) } });
    expect(await nextConfigChange(ws)).toMatchObject({ removed: ['b'], changed: [], kept: ['a'] });
    const warnings = (await d.json<{ discovery: { warnings: Array<{ message: string }> } }>('/status')).body.discovery.warnings;
    expect(warnings.map((w) => w.message)).toContainEqual(
      `${t.cursorFile}: server "a" is invalid: unresolved placeholder \${input:token} (an editor prompt; a daemon cannot answer it) in env.TOKEN`,
    );
    expect(await pidOf(t, 'a')).toBe(a0);
    expect((await server(d, 'a')).connectedSince).toBe(since);

    // Fixed: back to the file's config, which is the one a already runs with.
    await writeJson(t.cursorFile, { mcpServers: { a: echo('a') } });
    expect(await nextConfigChange(ws)).toMatchObject({ added: [], removed: [], changed: [], kept: [] });
    expect(await pidOf(t, 'a')).toBe(a0);
  });

  it('POST /reload reconciles the same way; ?force=true restarts everything; watch: false watches nothing', async ({ expect, onTestFinished }) => {
    const t = await tree(onTestFinished);
    await writeJson(t.cursorFile, { mcpServers: { a: echo('a') } });
    const d = await liveDaemon(t, onTestFinished, { watch: false });
    expect(d.daemon.runtime.watchedDirs).toEqual([]);
    const a0 = await pidOf(t, 'a');
    const ws = await openEvents(d.url);
    await nextEvent(ws, 'hello');

    await writeJson(t.cursorFile, { mcpServers: { a: echo('a'), n: echo('n') } });
    const reload = await d.json<{ servers: ServerView[] }>('/reload', { method: 'POST' });
    expect(reload.status).toBe(200);
    expect(reload.body.servers.map((s) => [s.name, s.status])).toEqual([
      ['a', 'connected'],
      ['n', 'connected'],
    ]);
    // The only config.changed is the reload's own: the edit was not picked up by a watcher.
    expect(await nextConfigChange(ws)).toMatchObject({ cause: 'reload', files: [], added: ['n'], changed: [] });
    expect(await pidOf(t, 'a')).toBe(a0);

    const forced = await d.json<{ servers: ServerView[] }>('/reload?force=true', { method: 'POST' });
    expect(forced.status).toBe(200);
    expect(await pidOf(t, 'a')).not.toBe(a0);
    expect(isProcessGone(a0)).toBe(true);
  });

  it('watches the directories of every config file, including ones that do not exist yet', async ({ expect, onTestFinished }) => {
    const t = await tree(onTestFinished);
    const d = await liveDaemon(t, onTestFinished);
    // Nothing exists but the two temp directories: everything is watched through them.
    expect(d.daemon.runtime.watchedDirs).toEqual([t.home, t.cwd].sort());
  });
});
