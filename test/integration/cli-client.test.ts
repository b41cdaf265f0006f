import { describe, expect, it } from 'vitest';
import { runCall, runDisconnect, runReload, runStatus, runTools, type CommandIo } from '../../src/cli/client/index.js';
import { formatTable } from '../../src/cli/client/table.js';
import { startDaemon, startEchoDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';
import { NOBODY_LISTENS_URL } from '../helpers/free-port.js';

type Command = (io: CommandIo) => Promise<number>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a client command in-process with captured output. */
async function run(command: Command, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await command({
    argv,
    env,
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
  });
  return { code, stdout, stderr };
}

/** The echo daemon of the tests that only read it (status, tools, calls, unknown names). */
const echoDaemon = sharedByTests(
  () => startEchoDaemon({ lifetime: 'manual' }),
  (d) => d.close(),
);

describe('switchboard status', () => {
  it('prints one aligned row per server, and the raw body with --json', async () => {
    const d = await echoDaemon();

    const table = await run(runStatus, ['--url', d.url]);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toMatch(/^Switchboard \S+ · ready · 1 server · 3 tools$/m);
    expect(table.stdout).toMatch(/^NAME\s+STATUS\s+TRANSPORT\s+PROTOCOL\s+TOOLS\s+SOURCE\s+ERROR$/m);
    // The echo fixture speaks the 2025 era only (it answers the modern probe with an error).
    expect(table.stdout).toMatch(/^echo\s+connected\s+stdio\s+2025-11-25 \(legacy\)\s+3\s+Test$/m);

    const json = await run(runStatus, ['--url', d.url, '--json']);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as { state: string; servers: Array<{ name: string; status: string }> };
    expect(body.state).toBe('ready');
    expect(body.servers).toEqual([expect.objectContaining({ name: 'echo', status: 'connected' })]);
  });

  it('lists load errors as `path: CODE: message`, a discovery failure included', async () => {
    const broken = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio'), broken: { type: 'stdio' } } });
    const failed = await run(runStatus, ['--url', broken.url]);
    expect(failed.code).toBe(0);
    expect(failed.stdout).toMatch(/\nErrors:\n {2}broken: CONFIG_INVALID: \S.*\n/);

    const lost = await startDaemon({ discover: () => Promise.reject(new Error('loader exploded')) });
    expect((await run(runStatus, ['--url', lost.url])).stdout).toContain('\nErrors:\n  .mcp.json: DISCOVERY_FAILED: loader exploded\n');
  });

  it('reads the daemon URL from SWITCHBOARD_URL', async () => {
    const d = await echoDaemon();
    const result = await run(runStatus, [], { SWITCHBOARD_URL: d.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^echo\s+connected/m);
  });

  it('fails with exit 1 when no daemon answers: the error, then how to start one', async () => {
    const url = NOBODY_LISTENS_URL;
    for (const command of [runStatus, runTools, runReload] as const) {
      const result = await run(command, ['--url', url]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        new RegExp(`^switchboard: cannot reach daemon at ${url}: .*ECONNREFUSED.*\\nswitchboard: is the daemon running\\?.*\\n.*switchboard serve.*\\n$`),
      );
    }
  });

  it('exits 2 on bad flags and a bad --url, without a request', async () => {
    const unknown = await run(runStatus, ['--nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^switchboard: .*--nope/);

    const badUrl = await run(runStatus, ['--url', 'not a url']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/^switchboard: invalid --url "not a url"/);
  });
});

describe('switchboard tools', () => {
  it('lists the aggregated tools, filters by server and query, and --json parses', async () => {
    const d = await echoDaemon();

    const all = await run(runTools, ['--url', d.url]);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^NAME\s+SERVER\s+DESCRIPTION$/m);
    expect(all.stdout).toMatch(/^mcp_echo_add\s+echo\s+Adds two numbers$/m);
    expect(all.stdout).toMatch(/^mcp_echo_echo\s+echo\s+Returns its text unchanged$/m);
    expect(all.stdout).toMatch(/^mcp_echo_reverse\s+echo\s+Reverses its text$/m);
    expect(all.stdout).toMatch(/^3 tools$/m);

    const byQuery = await run(runTools, ['--url', d.url, '-q', 'reverse']);
    expect(byQuery.stdout).toMatch(/^mcp_echo_reverse\s/m);
    expect(byQuery.stdout).not.toMatch(/mcp_echo_add/);

    // An unknown server is a mistake to report (issue #25), not an empty list.
    const byServer = await run(runTools, ['--url', d.url, '--server', 'nobody']);
    expect(byServer).toMatchObject({ code: 1, stdout: '', stderr: 'switchboard: SERVER_NOT_FOUND: no server named "nobody" (servers: echo)\n' });

    const json = await run(runTools, ['--url', d.url, '--json', '--server', 'echo']);
    const body = JSON.parse(json.stdout) as { tools: Array<{ name: string; server: string }> };
    expect(body.tools.map((tool) => tool.name)).toEqual(['mcp_echo_add', 'mcp_echo_echo', 'mcp_echo_reverse']);
  });
});

describe('switchboard call', () => {
  it('prints text content, then structuredContent as JSON', async () => {
    const d = await echoDaemon();

    const echo = await run(runCall, ['--url', d.url, 'mcp_echo_echo', '{"text":"hello there"}']);
    expect(echo).toEqual({ code: 0, stdout: 'hello there\n', stderr: '' });

    const add = await run(runCall, ['--url', d.url, 'mcp_echo_add', '{"a":2,"b":3}', '--timeout', '5000']);
    expect(add).toEqual({ code: 0, stdout: `5\n${JSON.stringify({ sum: 5 }, null, 2)}\n`, stderr: '' });

    const json = await run(runCall, ['--url', d.url, '--json', 'mcp_echo_add', '{"a":1,"b":1}']);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: [{ type: 'text', text: '2' }], structuredContent: { sum: 2 } });
  });

  it('exits 1 when the tool result is an error', async () => {
    const d = await echoDaemon();
    // The fixture's input schema requires `text`; the server answers with an isError result.
    const result = await run(runCall, ['--url', d.url, 'mcp_echo_echo', '{}']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toBe('');
  });

  it('exits 1 with the daemon error code for an unknown tool', async () => {
    const d = await echoDaemon();
    const result = await run(runCall, ['--url', d.url, 'mcp_nope_nothing']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^switchboard: TOOL_NOT_FOUND: .*mcp_nope_nothing.*\n$/);
    expect(result.stderr.split('\n')).toHaveLength(2);
  });

  it('exits 2 on arguments that are not a JSON object, before any request', async () => {
    // A closed port: were a request sent, the exit code would be 1.
    const url = NOBODY_LISTENS_URL;
    const invalid = await run(runCall, ['--url', url, 'mcp_echo_echo', '{text:']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^switchboard: invalid JSON arguments: /);

    const notObject = await run(runCall, ['--url', url, 'mcp_echo_echo', '[1,2]']);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toMatch(/^switchboard: invalid JSON arguments: expected a JSON object/);

    expect((await run(runCall, ['--url', url])).code).toBe(2);
    expect((await run(runCall, ['--url', url, 'mcp_echo_echo', '{}', '--timeout', 'soon'])).code).toBe(2);
  });
});

describe('switchboard reload and disconnect', () => {
  it('reloads one server, reloads all, disconnects one', async () => {
    // A gate longer than any connect: a reload answers with the server connected, never with
    // tools deferred from the cache.
    const d = await startEchoDaemon({ config: { startupGateMs: 30_000 } });

    const one = await run(runReload, ['--url', d.url, 'echo']);
    expect(one).toEqual({ code: 0, stdout: 'reloaded echo: connected, 3 tools\n', stderr: '' });

    // The table is the one `status` prints; every reload respawns the fixture, so only one here.
    const allJson = await run(runReload, ['--url', d.url, '--json']);
    expect(JSON.parse(allJson.stdout)).toMatchObject({ servers: [{ name: 'echo', status: 'connected' }], errors: [] });

    const gone = await run(runDisconnect, ['--url', d.url, 'echo']);
    expect(gone).toEqual({ code: 0, stdout: 'disconnected echo: disconnected, 0 tools\n', stderr: '' });
    expect((await run(runTools, ['--url', d.url])).stdout).toBe('No tools.\n');
  }, 60_000);

  it('exits 1 with SERVER_NOT_FOUND for an unknown server, 2 without a server', async () => {
    const d = await echoDaemon();

    const reload = await run(runReload, ['--url', d.url, 'ghost']);
    expect(reload.code).toBe(1);
    expect(reload.stderr).toMatch(/^switchboard: SERVER_NOT_FOUND: /);

    const disconnect = await run(runDisconnect, ['--url', d.url, 'ghost', '--json']);
    expect(disconnect.code).toBe(1);
    expect(disconnect.stderr).toMatch(/^switchboard: SERVER_NOT_FOUND: /);

    expect((await run(runDisconnect, ['--url', d.url])).code).toBe(2);
  });
});

describe('a daemon with a token', () => {
  it('refuses without --token and answers with it or SWITCHBOARD_TOKEN', async () => {
    const d = await startEchoDaemon({ config: { token: 'cli-test-token' } });

    const refused = await run(runStatus, ['--url', d.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^switchboard: UNAUTHORIZED: .+\n$/);

    const wrong = await run(runTools, ['--url', d.url, '--token', 'wrong']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^switchboard: UNAUTHORIZED: /);

    const flag = await run(runCall, ['--url', d.url, '--token', 'cli-test-token', 'mcp_echo_echo', '{"text":"ok"}']);
    expect(flag).toEqual({ code: 0, stdout: 'ok\n', stderr: '' });

    const env = await run(runStatus, ['--url', d.url], { SWITCHBOARD_TOKEN: 'cli-test-token' });
    expect(env.code).toBe(0);
    expect(env.stdout).toMatch(/^echo\s+connected/m);
  });
});

describe('formatTable', () => {
  it('aligns columns, right-aligns numbers, cuts long cells and leaves no trailing blanks', () => {
    const rows = [
      { name: 'a', n: 1, text: 'short' },
      { name: 'longer-name', n: 12345, text: 'x'.repeat(20) },
      { name: 'b', n: 7, text: undefined },
    ];
    const text = formatTable(rows, [
      { header: 'NAME', value: (r) => r.name },
      { header: 'N', value: (r) => r.n, align: 'right' },
      { header: 'TEXT', value: (r) => r.text, maxWidth: 10 },
    ]);
    expect(text.split('\n')).toEqual(['NAME             N  TEXT', 'a                1  short', 'longer-name  12345  xxxxxxxxx…', 'b                7  -']);
  });
});
