import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../../src/config/types.js';
import { fixturePath } from '../../test/helpers/fixtures.js';

/**
 * The baseline every call benchmark is measured against: the SDK's own `Client` over the SDK's
 * `StdioClientTransport`, talking to the same fixture bundle the daemon spawns, from the bench
 * process. No Switchboard code is on this path.
 */
export interface DirectClient {
  client: Client;
  /** The fixture server's pid. */
  pid: number;
  close(): Promise<void>;
}

export async function connectDirect(fixture: string, env?: Record<string, string>): Promise<DirectClient> {
  return connectDirectTo({ command: process.execPath, args: [fixturePath(fixture)], ...(env ? { env } : {}) });
}

/** The same, for any stdio server (B7's server-everything setup). */
export async function connectDirectTo(server: ServerConfig): Promise<DirectClient> {
  const transport = new StdioClientTransport({
    command: server.command as string,
    args: server.args ?? [],
    ...(server.env ? { env: server.env } : {}),
    stderr: 'ignore',
  });
  const client = new Client({ name: 'switchboard-bench-direct', version: '0.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid as number, close: () => client.close() };
}
