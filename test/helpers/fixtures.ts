import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ServerConfig } from '../../src/config/types.js';
import { FIXTURE_BUILD_DIR } from './build-fixtures.js';
import type { Cleanup } from './process.js';
import { hostedStdioConfig } from './stdio-fixture-host.js';

/**
 * Fixture MCP servers are TypeScript files under test/fixtures/servers. The vitest global setup
 * bundles each into test/fixtures/.build/<name>.mjs (see build-fixtures.ts), so a fixture starts
 * as plain `node <bundle>` — with the minimal env a stdio server gets, from any directory.
 */
export interface FixtureOptions {
  env?: Record<string, string>;
  args?: string[];
  /** `startFixtureHttp` only: where to register `close` (e.g. `onTestFinished`, a `cleanupStack`). @default none: the caller closes it */
  cleanup?: Cleanup;
  /**
   * Run the fixture as its own `node` process even where the test worker could host it
   * (stdio-fixture-host.ts): for a test about the server's process (its pid, signals, exit). @default false
   */
  process?: boolean;
}

/** The runnable bundle of fixture `name`. */
export function fixturePath(name: string): string {
  return join(FIXTURE_BUILD_DIR, `${name}.mjs`);
}

/**
 * A stdio ServerConfig that runs fixture `name` (e.g. 'echo-stdio'): hosted in this test worker
 * behind socat where the fixture allows it (stdio-fixture-host.ts), else as `node <bundle>`.
 */
export function fixtureServerConfig(name: string, options: FixtureOptions = {}): ServerConfig {
  const hosted = hostedStdioConfig(name, options);
  if (hosted) return hosted;
  return {
    command: process.execPath,
    args: [fixturePath(name), ...(options.args ?? [])],
    ...(options.env ? { env: options.env } : {}),
  };
}

export interface FixtureHttp {
  /** The MCP endpoint: …/mcp for echo-http, …/sse for echo-sse. */
  url: string;
  pid: number;
  /** SIGTERMs the server and waits for it to exit. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP fixture (echo-http, echo-sse) as a child process on 127.0.0.1:0 and resolves
 * once it has printed its URL. Register `close` with onTestFinished.
 */
export async function startFixtureHttp(name: string, options: FixtureOptions = {}): Promise<FixtureHttp> {
  const child = spawn(process.execPath, [fixturePath(name), ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  const exited = once(child, 'exit');
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    })());
  options.cleanup?.(close);
  const lines = createInterface({ input: child.stdout });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        reject(new Error(`fixture ${name} exited (${code ?? signal}) before listening:\n${stderr.join('')}`)),
      );
    });
    return { url, pid: child.pid as number, close };
  } catch (err) {
    await close();
    throw err;
  } finally {
    lines.close();
  }
}
