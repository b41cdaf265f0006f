import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { perRequestSignalFetch } from '../../src/upstream/transport/transports.js';
import type { DirectClient } from './direct.js';
import { ECHO_BODY, ECHO_PATH, echoStdioUpstream, type EchoUpstream } from './echo.js';
import { createHttpClient, expectStatus } from './http.js';
import type { LoadPath } from './load.js';

/**
 * The ways the bench makes the same `echo` call, each a `LoadPath` for `runRounds`: over REST with
 * the keep-alive `node:http` client (Switchboard's route and mcp-hub's), over `/mcp` with the SDK's
 * own `Client` and Streamable HTTP transport (Switchboard's and mcp-proxy's endpoint), and the direct
 * SDK stdio client. Each path checks once, untimed, that it gets the echo back.
 */
export interface CallPath extends LoadPath {
  /** One call, untimed: throws unless the answer carries the echo text. */
  check(): Promise<void>;
  close(): Promise<void>;
}

export type McpEra = 'legacy' | 'modern';
/** The revision a `modern` client pins; `legacy` is the 2025 `initialize` handshake. */
export const MODERN_REVISION = '2026-07-28';

interface TextContent {
  content?: Array<{ type?: string; text?: string }>;
}

function expectEcho(result: TextContent | undefined, what: string, expected: string): void {
  const text = result?.content?.[0]?.text;
  if (text !== expected) throw new Error(`${what} answered ${JSON.stringify(result).slice(0, 300)}, not the echo`);
}

interface RestPathOptions {
  id: string;
  baseUrl: string;
  frontPid: number;
  path: string;
  /** Serialised once, so the timed loop does not. */
  body: Buffer;
  /** The tool result inside the response body (mcp-hub wraps it in `{ result }`). */
  resultOf(body: unknown): TextContent | undefined;
  /** Keep-alive sockets: 1 for sequential calls, as many as calls in flight otherwise. */
  connections: number;
  /** The text the echo answers with. */
  expected: string;
}

function restPath(options: RestPathOptions): CallPath {
  const http = createHttpClient(options.baseUrl, { connections: options.connections });
  const what = `${options.id}: POST ${options.path}`;
  return {
    id: options.id,
    frontPid: options.frontPid,
    call: async () => {
      const res = await http.postJson(options.path, options.body);
      if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    },
    check: async () => {
      const res = expectStatus(await http.postJson(options.path, options.body), 200, what);
      expectEcho(options.resultOf(JSON.parse(res.body.toString('utf8'))), what, options.expected);
    },
    close: async () => http.close(),
  };
}

/** `POST /tools/mcp_echo_echo/call` on a Switchboard daemon whose echo server is named `echo`. */
export function switchboardRestPath(baseUrl: string, frontPid: number, connections: number, id = 'switchboard-rest', upstream = echoStdioUpstream()): CallPath {
  const body = upstream.args === echoStdioUpstream().args ? ECHO_BODY : Buffer.from(JSON.stringify({ arguments: upstream.args }));
  return restPath({ id, baseUrl, frontPid, path: ECHO_PATH, body, resultOf: (res) => res as TextContent, connections, expected: upstream.expected });
}

/** mcp-hub's `POST /api/servers/tools` with `{ server_name, tool, arguments }`; it answers `{ result, timestamp }`. */
export function mcpHubRestPath(baseUrl: string, frontPid: number, connections: number, serverName = 'echo', id = 'mcp-hub-rest', upstream = echoStdioUpstream()): CallPath {
  const body = Buffer.from(JSON.stringify({ server_name: serverName, tool: 'echo', arguments: upstream.args }));
  return restPath({ id, baseUrl, frontPid, path: '/api/servers/tools', body, resultOf: (b) => (b as { result?: TextContent }).result, connections, expected: upstream.expected });
}

export interface McpPathOptions {
  id: string;
  /** The endpoint, e.g. `http://127.0.0.1:1234/mcp`. */
  url: string;
  frontPid: number;
  /** The echo tool's name on that endpoint (`mcp_echo_echo` on Switchboard, `echo` on mcp-proxy). */
  tool: string;
  era: McpEra;
  /** @default the echo-stdio fixture's arguments and answer */
  upstream?: EchoUpstream;
}

/**
 * An SDK v2 `Client` over `StreamableHTTPClientTransport`, connected: `legacy` = a 2025-era session
 * (`initialize`, `Mcp-Session-Id`), `modern` = pinned to 2026-07-28 (stateless, `server/discover`).
 * Concurrent calls share the one client, as one agent's parallel calls would.
 */
export async function mcpClientPath(options: McpPathOptions): Promise<CallPath> {
  const mode = options.era === 'legacy' ? 'legacy' : { pin: MODERN_REVISION };
  const client = new Client({ name: 'switchboard-bench', version: '0.0.0' }, { versionNegotiation: { mode } });
  // The daemon's own fetch wrapper: without it the SDK transport's one long-lived signal collects
  // an abort listener per request and the bench process warns (MaxListenersExceededWarning).
  const transport = new StreamableHTTPClientTransport(new URL(options.url), { fetch: perRequestSignalFetch() });
  await client.connect(transport);
  const era = client.getProtocolEra();
  if (era !== options.era) {
    await client.close();
    throw new Error(`${options.id}: connected in the ${era} era, not ${options.era}`);
  }
  const upstream = options.upstream ?? echoStdioUpstream();
  const request = { name: options.tool, arguments: upstream.args };
  return {
    id: options.id,
    frontPid: options.frontPid,
    call: () => client.callTool(request),
    check: async () => expectEcho((await client.callTool(request)) as TextContent, options.id, upstream.expected),
    close: async () => {
      // A 2025-era session is ended as a well-behaved client would: DELETE, then close.
      if (options.era === 'legacy') await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** The direct SDK stdio client: the floor every path is measured against. Closing it is the caller's. */
export function directPath(direct: DirectClient, id = 'direct', upstream = echoStdioUpstream()): CallPath {
  const request = { name: 'echo', arguments: upstream.args };
  return {
    id,
    frontPid: Number.NaN,
    call: () => direct.client.callTool(request),
    check: async () => expectEcho((await direct.client.callTool(request)) as TextContent, id, upstream.expected),
    close: async () => undefined,
  };
}

/**
 * `/mcp` with every answer checked: `callTool` resolves with `isError: true` results too, and a
 * front that failed calls quickly would look fast. (REST paths throw on any status but 200.)
 */
export function failingOnError(path: CallPath): CallPath {
  return {
    ...path,
    call: async () => {
      const result = (await path.call()) as { isError?: boolean; content?: unknown };
      if (result.isError === true) throw new Error(`${path.id}: the call failed: ${JSON.stringify(result.content).slice(0, 300)}`);
      return result;
    },
  };
}
