import { readFileSync } from 'node:fs';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ServerConfig } from '../../src/config/types.js';
import { textOf } from '../helpers/connect.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { nextEvent, openEvents } from '../helpers/events.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/process.js';

/**
 * Issue #36 item 1: roots belong to whoever owns them. A server such as the filesystem one
 * (the `allowed-folder` fixture behaves like it) replaces the folder its command line names with
 * the roots a client declares; Switchboard declares none of its own — never its working directory —
 * so the server keeps its folder, unless its entry names `roots`, or an agent's call brings the
 * agent's (confined to the entry's).
 */

type CallResult = { content: Array<{ type: string; text: string }>; isError?: boolean };

/** The real `@modelcontextprotocol/server-filesystem`'s entry point (a devDependency, the version of server-everything). */
const FILESYSTEM_SERVER = ((): string => {
  const manifest = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === 'string' ? bin : (Object.values(bin)[0] as string));
})();

async function call(d: TestDaemon, tool: string, args: Record<string, unknown> = {}): Promise<CallResult> {
  const { status, body } = await d.json<CallResult>(`/tools/${tool}/call`, { method: 'POST', body: { arguments: args } });
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

async function allowedOf(d: TestDaemon, server: string): Promise<string[]> {
  return JSON.parse(textOf(await call(d, `mcp_${server}_list_allowed`))) as string[];
}

async function dir(): Promise<string> {
  return realpath(await tempDir());
}

function folderServer(folder: string, extra: Partial<ServerConfig> = {}): ServerConfig {
  return { ...fixtureServerConfig('allowed-folder', { args: [folder] }), ...extra };
}

describe('roots belong to whoever owns them (issue #36 item 1)', () => {
  it('a server keeps the folder its command line names under a daemon started in another directory', async () => {
    const [own, elsewhere] = [await dir(), await dir()];
    const d = await startDaemon({ servers: { files: folderServer(own) }, deps: { cwd: elsewhere } });

    expect(await allowedOf(d, 'files')).toEqual([own]);
    const wrote = await call(d, 'mcp_files_write_file', { path: join(own, 'note.txt'), content: 'hello' });
    expect(wrote.isError).toBeFalsy();
    expect(await readFile(join(own, 'note.txt'), 'utf8')).toBe('hello');
    const refused = await call(d, 'mcp_files_write_file', { path: join(elsewhere, 'note.txt'), content: 'no' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('path outside allowed directories');
    // It was offered no roots to take in place of its own folder.
    expect(textOf(await call(d, 'mcp_files_roots_outcome'))).toBe('No valid root directories provided by client');
  });

  it('the real filesystem server writes into the folder its command line names, under a daemon started elsewhere', async () => {
    const [own, elsewhere] = [await dir(), await dir()];
    const files: ServerConfig = { command: process.execPath, args: [FILESYSTEM_SERVER, own] };
    const d = await startDaemon({ servers: { files }, deps: { cwd: elsewhere } });
    const wrote = await call(d, 'mcp_files_write_file', { path: join(own, 'note.txt'), content: 'hello' });
    expect(wrote.isError, textOf(wrote)).toBeFalsy();
    expect(await readFile(join(own, 'note.txt'), 'utf8')).toBe('hello');
    const refused = await call(d, 'mcp_files_write_file', { path: join(elsewhere, 'note.txt'), content: 'no' });
    expect(refused.isError).toBe(true);
  });

  it("an entry's roots reach that server only, and a live edit of them reaches it", async () => {
    const [home, cwd, ownA, ownB, scopedC, scopedD] = [await dir(), await dir(), await dir(), await dir(), await dir(), await dir()];
    const file = join(home, '.config', 'switchboard', 'config.json');
    const write = async (roots: string[]): Promise<void> => {
      await mkdir(join(home, '.config', 'switchboard'), { recursive: true });
      await writeFile(file, JSON.stringify({ mcpServers: { scoped: folderServer(ownA, { roots }), plain: folderServer(ownB) } }));
    };
    await write([scopedC]);
    const d = await startDaemon({ realDiscovery: true, deps: { home, cwd, env: {} }, config: { startupGateMs: 60_000 } });
    expect(await allowedOf(d, 'scoped')).toEqual([scopedC]);
    expect(await allowedOf(d, 'plain')).toEqual([ownB]);
    const plainSince = (await d.json<{ connectedSince: string }>('/servers/plain')).body.connectedSince;

    const ws = await openEvents(d.url);
    await nextEvent(ws, 'hello');
    await write([scopedD]);
    expect(await nextEvent(ws, 'config.changed')).toMatchObject({ changed: ['scoped'], added: [], removed: [] });
    expect(await allowedOf(d, 'scoped')).toEqual([scopedD]);
    expect(await allowedOf(d, 'plain')).toEqual([ownB]);
    expect((await d.json<{ connectedSince: string }>('/servers/plain')).body.connectedSince).toBe(plainSince);
  });

  it("an agent's roots reach the server during that agent's call, confined to the entry's; without an agent, the entry's", async () => {
    const [own, scoped, outside] = [await dir(), await dir(), await dir()];
    const inside = join(scoped, 'project');
    await mkdir(inside);
    const d = await startDaemon({ servers: { files: folderServer(own, { roots: [scoped] }) } });

    // A REST call has no agent to ask: the entry's roots.
    expect(JSON.parse(textOf(await call(d, 'mcp_files_ask_roots')))).toEqual([pathToFileURL(scoped).href]);

    const agent = new Client({ name: 'agent', version: '1.0.0' }, { capabilities: { roots: {} } });
    agent.setRequestHandler('roots/list', () => ({ roots: [{ uri: pathToFileURL(inside).href }, { uri: pathToFileURL(outside).href }] }));
    await agent.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url)));
    onTestFinished(() => agent.close());
    const result = await agent.callTool({ name: 'mcp_files_ask_roots', arguments: {} });
    expect(JSON.parse(textOf(result as CallResult))).toEqual([pathToFileURL(inside).href]);
  });
});
