import { createRequire } from 'node:module';
import { fixtureServerConfig } from '../../test/helpers/fixtures.js';
import type { ServerConfig } from '../../src/config/types.js';

/** The echo call every call benchmark makes, the same through the daemon and directly. */
export const ECHO_TEXT = 'hello from the switchboard bench';
export const ECHO_ARGS = { text: ECHO_TEXT };
/** `POST /tools/mcp_echo_echo/call` body, serialised once so the timed loop does not. */
export const ECHO_BODY = Buffer.from(JSON.stringify({ arguments: ECHO_ARGS }));
/** The server is named `echo` in the daemon, so its tool is exposed as `mcp_echo_echo`. */
export const ECHO_PATH = '/tools/mcp_echo_echo/call';

export function echoServers(): Record<string, ServerConfig> {
  return { echo: fixtureServerConfig('echo-stdio') };
}

/**
 * An upstream with an `echo` tool, as B7 fronts it: the project's fixture, or the npm
 * `@modelcontextprotocol/server-everything` (issue #27's second setup; SDK v1, `{message}` in,
 * `"Echo: <message>"` out).
 */
export interface EchoUpstream {
  /** How the rows name the setup. */
  label: string;
  server: ServerConfig;
  /** The echo tool's arguments, and the text its result's first content carries. */
  args: Record<string, unknown>;
  expected: string;
}

export function echoStdioUpstream(): EchoUpstream {
  return { label: 'echo-stdio fixture', server: fixtureServerConfig('echo-stdio'), args: ECHO_ARGS, expected: ECHO_TEXT };
}

export function everythingUpstream(): EchoUpstream {
  const entry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  return {
    label: 'server-everything',
    server: { command: process.execPath, args: [entry, 'stdio'] },
    args: { message: ECHO_TEXT },
    expected: `Echo: ${ECHO_TEXT}`,
  };
}
