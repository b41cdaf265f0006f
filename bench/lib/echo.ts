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
