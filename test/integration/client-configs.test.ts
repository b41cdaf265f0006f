import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitForStatus } from '../helpers/status-watch.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { textOf } from '../helpers/connect.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, type Cleanup } from '../helpers/process.js';
import { sharedWithCleanup, startAhead } from '../helpers/shared.js';
import { mcpClient } from '../helpers/mcp-client.js';

/**
 * Issue #15, item 1: a real daemon with the real discovery over a temp HOME and project holding
 * each client's own file format, talking to real fixture servers. What each client writes
 * (placeholders, tool filters, timeouts) must mean here what it means in that client.
 */

interface ToolList {
  tools: Array<{ name: string; server: string }>;
}
interface ErrorBody {
  error: { code: string; message: string };
}
interface Status {
  discovery: { warnings: Array<{ message: string; path?: string; server?: string }> };
}

async function write(path: string, content: string | object): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
}

/** A TOML string literal: JSON's escaping is valid TOML for basic strings. */
const toml = (value: string): string => JSON.stringify(value);

async function startClientsDaemon(cleanup: Cleanup): Promise<{ d: TestDaemon; home: string; cwd: string }> {
  const home = await realpath(await tempDir(cleanup));
  const cwd = await realpath(await tempDir(cleanup));
  const introspect = fixtureServerConfig('introspect');
  const echo = fixtureServerConfig('echo-stdio');
  const slow = fixtureServerConfig('slow-tool');
  const hang = fixtureServerConfig('never-answers-initialize');

  // Cursor (user file): editor variables, ${env:…} and mcp-hub's ${cmd: …}.
  await write(join(home, '.cursor', 'mcp.json'), {
    mcpServers: {
      cursor: {
        ...introspect,
        env: {
          SEEN_HOME: '${userHome}',
          SEEN_WS: '${workspaceFolder}',
          SEEN_WSB: '${workspaceFolderBasename}',
          SEEN_SEP: '${pathSeparator}',
          SEEN_ENV: '${env:SB_TEST_VALUE}',
          SEEN_CMD: 'pre-${cmd: printf s3cret}-post',
        },
      },
    },
  });
  // VS Code (project file): an ${input:…} prompt nobody can answer.
  await write(join(cwd, '.vscode', 'mcp.json'), {
    inputs: [{ id: 'api-token', type: 'promptString', password: true }],
    servers: { prompted: { type: 'stdio', ...echo, env: { API_TOKEN: '${input:api-token}' } } },
  });
  // Gemini CLI (user file): tool filters, and `timeout` as the per-request (call) timeout.
  await write(join(home, '.gemini', 'settings.json'), {
    mcpServers: {
      gem: { ...echo, includeTools: ['echo', 'reverse'], excludeTools: ['reverse'] },
      gemslow: { ...slow, timeout: 300 },
    },
  });
  // Codex (TOML): disabled_tools, and startup_timeout_sec bounding the connect.
  await write(
    join(home, '.codex', 'config.toml'),
    [
      '[mcp_servers.cdx]',
      `command = ${toml(echo.command!)}`,
      `args = [${echo.args!.map(toml).join(', ')}]`,
      'disabled_tools = ["add"]',
      // Otherwise the same connection as Gemini's `gem`, which would shadow it.
      'env = { WHICH = "cdx" }',
      '',
      '[mcp_servers.cdxhang]',
      `command = ${toml(hang.command!)}`,
      `args = [${hang.args!.map(toml).join(', ')}]`,
      'startup_timeout_sec = 0.5',
      '',
    ].join('\n'),
  );
  // Switchboard's own file: the same filter keys.
  await write(join(home, '.config', 'switchboard', 'config.json'), {
    mcpServers: { nat: { ...echo, env: { WHICH: 'nat' }, includeTools: ['add'] } },
  });

  const d = await startDaemon({
    realDiscovery: true,
    deps: { home, cwd, env: { SB_TEST_VALUE: 'from-env' } },
    cleanup,
  });
  // The tests read these servers connected (cdxhang failed). The startup gate may end before six
  // servers have all started on a busy box (load 14 once: cdx still connecting), so wait for them.
  await waitForStatus<{ servers: Array<{ name: string; status: string }> }>(d.url, (status) =>
    SETTLED.every(([name, want]) => status.servers.some((server) => server.name === name && server.status === want)),
  );
  return { d, home, cwd };
}

/** What each server the files declare ends as; `prompted` is invalid, so never started. */
const SETTLED = [
  ['cursor', 'connected'],
  ['gem', 'connected'],
  ['gemslow', 'connected'],
  ['cdx', 'connected'],
  ['nat', 'connected'],
  ['cdxhang', 'failed'],
] as const;

/**
 * One daemon over these files for the file's tests (issue #34): they only read it (lists, calls,
 * status), and each start cost six fixture processes. A server that failed to connect stays
 * `failed` until a reload, so the later tests see what the first would have.
 */
const clientsDaemon = sharedWithCleanup(startClientsDaemon);

describe('client config files, read as their clients read them', () => {
  startAhead(clientsDaemon);

  it('expands editor variables, ${env:…} and ${cmd: …}; reports ${input:…} as invalid, not started', async () => {
    const { d, home, cwd } = await clientsDaemon();

    const call = await d.json<{ content: unknown[] }>('/tools/mcp_cursor_env/call', { method: 'POST', body: {} });
    expect(call.status).toBe(200);
    const env = JSON.parse(textOf(call.body)) as Record<string, string>;
    expect(env).toMatchObject({
      SEEN_HOME: home,
      SEEN_WS: cwd,
      SEEN_WSB: basename(cwd),
      SEEN_SEP: sep,
      SEEN_ENV: 'from-env',
      SEEN_CMD: 'pre-s3cret-post',
    });

    expect((await d.json<ErrorBody>('/servers/prompted')).status).toBe(404);
    const { warnings } = (await d.json<Status>('/status')).body.discovery;
    const vscodeFile = join(cwd, '.vscode', 'mcp.json');
    expect(warnings).toContainEqual({
      message: `${vscodeFile}: server "prompted" is invalid: unresolved placeholder \${input:api-token} (an editor prompt; a daemon cannot answer it) in env.API_TOKEN`,
      path: vscodeFile,
      provider: 'vscode',
      server: 'prompted',
    });
    // The command's output is a secret: nowhere in what the daemon shows.
    expect(JSON.stringify((await d.json('/status')).body)).not.toContain('s3cret');
    expect(JSON.stringify((await d.json('/servers/cursor')).body)).not.toContain('s3cret');
  });

  it('applies Gemini, Codex and Switchboard tool filters to GET /tools, /mcp and calls', async () => {
    const { d } = await clientsDaemon();

    const names = (await d.json<ToolList>('/tools')).body.tools.filter((t) => ['gem', 'cdx', 'nat'].includes(t.server)).map((t) => t.name);
    expect(names).toEqual(['mcp_cdx_echo', 'mcp_cdx_reverse', 'mcp_gem_echo', 'mcp_nat_add']);

    for (const hidden of ['mcp_gem_reverse', 'mcp_gem_add', 'mcp_cdx_add', 'mcp_nat_echo']) {
      const res = await d.json<ErrorBody>(`/tools/${hidden}/call`, { method: 'POST', body: { arguments: { text: 'x', a: 1, b: 2 } } });
      expect(res.status, hidden).toBe(404);
      expect(res.body.error.code).toBe('TOOL_NOT_FOUND');
    }
    const ok = await d.json<{ content: unknown[] }>('/tools/mcp_gem_echo/call', { method: 'POST', body: { arguments: { text: 'hi' } } });
    expect(textOf(ok.body)).toBe('hi');

    const client = await mcpClient(d.url, { name: 'client-configs-test' });
    const listed = (await client.listTools()).tools.map((t) => t.name);
    expect(listed).toContain('mcp_gem_echo');
    expect(listed).not.toContain('mcp_gem_reverse');
    expect(listed).not.toContain('mcp_cdx_add');
    await expect(client.callTool({ name: 'mcp_gem_reverse', arguments: { text: 'x' } })).rejects.toThrow(/mcp_gem_reverse/);
  });

  it('maps Gemini timeout to the call timeout and Codex startup_timeout_sec to the connect timeout', async () => {
    const { d } = await clientsDaemon();

    const slow = await d.json<{ content: unknown[]; isError?: boolean }>('/tools/mcp_gemslow_slow/call', {
      method: 'POST',
      body: { arguments: { durationMs: 10_000 } },
    });
    expect(slow.body.isError).toBe(true);
    expect(textOf(slow.body)).toMatch(/timed out after 300 ms/);

    const hang = (await d.json<{ status: string; lastError: { code: string; message: string } }>('/servers/cdxhang')).body;
    expect(hang.status).toBe('failed');
    expect(hang.lastError).toMatchObject({ code: 'UPSTREAM_CONNECT_TIMEOUT', message: expect.stringMatching(/timed out after 500 ms/) });
  });
});
