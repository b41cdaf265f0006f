import { onTestFinished } from 'vitest';
import { connectToServer, type ConnectOptions, type ServerConnection } from '../../src/upstream/transport/client.js';
import { fixtureServerConfig, type FixtureOptions } from './fixtures.js';
import type { Cleanup } from './process.js';

/**
 * Connects to stdio fixture `name` and closes the connection when the test finishes (or through
 * `cleanup`: a concurrent test passes its context's `onTestFinished`).
 */
export async function connectFixture(name: string, fixture: FixtureOptions = {}, options: ConnectOptions = {}, cleanup: Cleanup = onTestFinished): Promise<ServerConnection> {
  const connection = await connectToServer(name, fixtureServerConfig(name, fixture), options);
  cleanup(() => connection.close());
  return connection;
}

/** The text of the first content block of a tool result. */
export function textOf(result: { content?: unknown }): string {
  const [first] = (result.content ?? []) as { type: string; text?: string }[];
  if (first?.type !== 'text' || first.text === undefined) throw new Error(`not a text result: ${JSON.stringify(result)}`);
  return first.text;
}
