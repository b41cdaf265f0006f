import type { ClientCapabilities } from '@modelcontextprotocol/client';

/**
 * MCP Apps (`io.modelcontextprotocol/ui`, issue #41): a host that can render a tool's `ui://`
 * view declares the extension among its client capabilities, and servers may offer their apps
 * only to such hosts. An agent's own declaration reaches a 2026-07-28 server with each of its
 * requests (input-required.ts). A 2025 session to a server is shared by every agent and
 * Switchboard's own requests (lists, REST calls) have no agent, so there Switchboard declares
 * the extension itself: it passes apps through, and a host that renders none ignores `_meta.ui`.
 */

/** The extension's identifier in `capabilities.extensions`. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/** The MIME type of an MCP Apps view. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** What Switchboard declares of MCP Apps on its own behalf. */
export const OWN_UI_CAPABILITIES: Pick<ClientCapabilities, 'extensions'> = {
  extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } },
};
