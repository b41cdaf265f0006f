import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { addAgentKey, OPERATOR_TOKEN } from '../helpers/agents.js';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { sharedByTests } from '../helpers/shared.js';
import { NOBODY_LISTENS_URL } from '../helpers/free-port.js';

/**
 * Issue #25, item 3: a careless call gets guidance, not only an error — the real `switchboard`
 * bundle in its own process, against a real daemon listening on a port.
 */

/** Runs the CLI bundle with `args`, with no Switchboard variables from the test runner's env. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const clean: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of ['SWITCHBOARD_URL', 'SWITCHBOARD_TOKEN', 'SWITCHBOARD_CONFIG']) if (!(name in env)) delete clean[name];
  return runCli(args, { env: clean });
}

/**
 * The daemon the tests that only read share (wrong names, typed values, a bare body, logs of
 * servers that never started): nothing they do changes it, and a daemon with its echo server for
 * each was most of this file's CPU besides the CLI's own processes.
 */
const echoDaemon = sharedByTests(
  (): Promise<TestDaemon> =>
    startDaemon({
      servers: {
        echo: fixtureServerConfig('echo-stdio'),
        // A server that never starts: its command does not exist.
        ghost: { command: '/nonexistent/switchboard-test-ghost-server' },
        // One that is never even started: stdio without a command.
        invalid: { type: 'stdio' },
      },
      lifetime: 'manual',
    }),
  (d) => d.close(),
);

/** The real CLI and a real daemon: one process start each is seconds on a loaded two-core box. */
const TIMEOUT_MS = 60_000;

describe('switchboard CLI hints', () => {
  it(
    'call <short name>: TOOL_NOT_FOUND, then "did you mean" with the exposed name',
    async () => {
      const d = await echoDaemon();
      const run = await cli(['call', 'echo', '{"text":"hi"}', '--url', d.url]);
      expect(run).toEqual({ code: 1, stdout: '', stderr: 'switchboard: TOOL_NOT_FOUND: No tool named "echo"\nswitchboard: did you mean mcp_echo_echo?\n' });
      // key=value looks the tool up first: the same answer comes from there.
      expect((await cli(['call', 'mcp_echo_ehco', 'text=hi', '--url', d.url])).stderr).toBe(
        'switchboard: TOOL_NOT_FOUND: No tool named "mcp_echo_ehco"\nswitchboard: did you mean mcp_echo_echo?\n',
      );
      // The REST answer carries the names as `suggestions`; nothing near, no field.
      const rest = await d.json<{ error: Record<string, unknown> }>('/tools/echo/call', { method: 'POST', body: { arguments: { text: 'hi' } } });
      expect(rest).toMatchObject({ status: 404, body: { error: { code: 'TOOL_NOT_FOUND', suggestions: ['mcp_echo_echo'] } } });
      const far = await d.json<{ error: Record<string, unknown> }>('/tools/zzzzzz', {});
      expect(far.body.error).toEqual({ code: 'TOOL_NOT_FOUND', message: 'No tool named "zzzzzz"' });
    },
    TIMEOUT_MS,
  );

  it(
    "suggestions come only from the caller's view: an agent is never shown a tool outside it",
    async () => {
      const d = await startDaemon({
        servers: { echo: fixtureServerConfig('echo-stdio'), other: fixtureServerConfig('echo-stdio') },
        config: { token: OPERATOR_TOKEN },
      });
      const key = await addAgentKey(d, { name: 'narrow', servers: ['echo'] });
      const suggestionsFor = async (token: string): Promise<unknown> => {
        const res = await fetch(`${d.url}/tools/echo/call`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ arguments: { text: 'hi' } }),
        });
        expect(res.status).toBe(404);
        return ((await res.json()) as { error: { suggestions?: unknown } }).error.suggestions;
      };
      expect(await suggestionsFor(OPERATOR_TOKEN)).toEqual(['mcp_echo_echo', 'mcp_other_echo']);
      expect(await suggestionsFor(key)).toEqual(['mcp_echo_echo']);

      // `/mcp` in both eras: the same names in the JSON-RPC error's data, from the same view.
      for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
        const mcpSuggestionsFor = async (token: string): Promise<unknown> => {
          const client = new Client({ name: 'hints', version: '1.0.0' }, { versionNegotiation: { mode } });
          await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
          onTestFinished(() => client.close());
          const error = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }).catch((err: unknown) => err);
          expect(error).toBeInstanceOf(ProtocolError);
          return (error as ProtocolError).data;
        };
        expect(await mcpSuggestionsFor(OPERATOR_TOKEN)).toEqual({ code: 'TOOL_NOT_FOUND', suggestions: ['mcp_echo_echo', 'mcp_other_echo'] });
        expect(await mcpSuggestionsFor(key)).toEqual({ code: 'TOOL_NOT_FOUND', suggestions: ['mcp_echo_echo'] });
      }
    },
    TIMEOUT_MS,
  );

  it(
    'call <tool> key=value…: the values typed by the input schema',
    async () => {
      const d = await echoDaemon();
      // a and b are numbers in mcp_echo_add's schema: sent as strings, the call would fail.
      const add = await cli(['call', 'mcp_echo_add', 'a=2', 'b=3', '--url', d.url]);
      expect(add).toEqual({ code: 0, stdout: '5\n{\n  "sum": 5\n}\n', stderr: '' });
      const echo = await cli(['call', 'mcp_echo_echo', 'text=007', '--url', d.url]);
      expect(echo).toEqual({ code: 0, stdout: '007\n', stderr: '' });
      const wrong = await cli(['call', 'mcp_echo_add', 'a=two', 'b=3', '--url', d.url]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/^switchboard: invalid value for "a": expected number, got "two"\n/);
    },
    TIMEOUT_MS,
  );

  it(
    'a REST call body with the arguments bare: 400 showing the wrapped form',
    async () => {
      const d = await echoDaemon();
      const res = await d.json<{ error: { code: string; message: string } }>('/tools/mcp_echo_echo/call', { method: 'POST', body: { text: 'secret-value' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: 'VALIDATION_FAILED',
        message: 'text: Unknown field. Tool arguments go inside "arguments": send {"arguments": {"text": …}} (the body may also carry "timeoutMs")',
      });
    },
    TIMEOUT_MS,
  );

  it(
    'no daemon: names the URL tried and where it came from, and how to start one',
    async () => {
      const url = NOBODY_LISTENS_URL;
      const run = await cli(['status', '--url', url]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `switchboard: cannot reach daemon at ${url}: connect ECONNREFUSED ${url.slice('http://'.length)}\n` +
          `switchboard: is the daemon running? Tried ${url} (from --url).\n` +
          'switchboard: start it with "switchboard serve" (or "npm start" in a clone of the repository), or point --url at the daemon\'s address\n',
      );
      const fromEnv = await cli(['tools'], { SWITCHBOARD_URL: url });
      expect(fromEnv.stderr).toContain(`Tried ${url} (from $SWITCHBOARD_URL).`);
    },
    TIMEOUT_MS,
  );

  it(
    'tools --server <unknown>: "no server named", the nearest name, exit 1',
    async () => {
      const d = await echoDaemon();
      const run = await cli(['tools', '--server', 'ecoh', '--url', d.url]);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: 'switchboard: SERVER_NOT_FOUND: no server named "ecoh" (servers: echo, ghost, invalid)\nswitchboard: did you mean echo?\n',
      });
      expect((await cli(['tools', '--server', 'echo', '--url', d.url])).code).toBe(0);
    },
    TIMEOUT_MS,
  );

  it(
    'logs <server that never started>: its status and last error',
    async () => {
      const d = await echoDaemon();
      const run = await cli(['logs', 'ghost', '--url', d.url]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^switchboard: ghost is failed: UPSTREAM_CONNECT_FAILED: .*ENOENT.*\n$/);
      const invalid = await cli(['logs', 'invalid', '--url', d.url]);
      expect(invalid).toEqual({ code: 0, stdout: '', stderr: 'switchboard: invalid is failed: CONFIG_INVALID: stdio server needs a "command"\n' });
      // A connected server's log has no such line.
      expect((await cli(['logs', 'echo', '--url', d.url])).stderr).toBe('');
    },
    TIMEOUT_MS,
  );

  it(
    "logs <server that failed at start>: the server's own stderr lines, its secrets masked (issue #36 item 4)",
    async () => {
      const secret = 'sk-test-SECRET-1234';
      const d = await startDaemon({
        captureLogs: 'info',
        servers: {
          broken: fixtureServerConfig('exits-at-start', {
            env: { API_KEY: secret, STDERR_LINES: `starting broken|boom: missing API_KEY|the key ${secret} was refused` },
          }),
        },
      });
      const run = await cli(['logs', 'broken', '--url', d.url]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('starting broken\nboom: missing API_KEY\nthe key **** was refused\n');
      expect(run.stderr).toBe(
        'switchboard: broken is failed: UPSTREAM_CONNECT_FAILED: Could not connect to MCP server "broken": the process exited with code 3 before it answered\n',
      );

      const { body } = await d.json<{ lastError: { code: string; message: string }; stderrTail: string[] }>('/servers/broken');
      expect(body.stderrTail).toEqual(['starting broken', 'boom: missing API_KEY', 'the key **** was refused']);
      expect(body.lastError.code).toBe('UPSTREAM_CONNECT_FAILED');
      expect(body.lastError.message).toContain('\nstderr:\nstarting broken\nboom: missing API_KEY\nthe key **** was refused');
      for (const text of [run.stdout, run.stderr, JSON.stringify(body), d.logs.text()]) expect(text).not.toContain(secret);
    },
    TIMEOUT_MS,
  );
});
