import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { onTestFinished } from 'vitest';
import type { Cleanup } from './process.js';

export interface McpClientOptions {
  /** The SDK's version negotiation: `legacy` (a 2025-era session) or a pinned revision. @default the SDK's own */
  era?: 'legacy' | { pin: string };
  /** An agent's key, sent as `Authorization: Bearer …`. */
  key?: string;
  capabilities?: ClientCapabilities;
  /** @default 'test' */
  name?: string;
  /** @default onTestFinished */
  cleanup?: Cleanup;
}

/**
 * An SDK client connected to the daemon's `/mcp` at `url`, as an agent connects; closed when the
 * test finishes (a close that fails, the daemon already gone, is no failure of the test).
 */
export async function mcpClient(url: string, options: McpClientOptions = {}): Promise<Client> {
  const { era, key, capabilities, name = 'test', cleanup = onTestFinished } = options;
  const client = new Client({ name, version: '1.0.0' }, { ...(era ? { versionNegotiation: { mode: era } } : {}), ...(capabilities ? { capabilities } : {}) });
  const requestInit = key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), requestInit));
  cleanup(() => client.close().catch(() => undefined));
  return client;
}
