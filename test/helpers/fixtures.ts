import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ServerConfig } from '../../src/config/types.js';
import { FIXTURE_BUILD_DIR } from './build-fixtures.js';
import { peersReadTheClose } from '../fixtures/servers/lib/http.js';
import { hostedHttpFixture } from './http-fixture-host.js';
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
   * Run the fixture as its own Node process even where the test worker could serve it
   * (stdio-fixture-host.ts, http-fixture-host.ts): for a test about the server's process — its
   * pid, its output, its signals, its exit. @default false
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
  /** The fixture process's pid; the test worker's own (`process.pid`) when the fixture is served inside it. */
  pid: number;
  /**
   * Stops the server: SIGTERMs the process and waits for it to exit, or closes the hosted server,
   * its connections and sessions. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Starts an HTTP fixture (echo-http, echo-sse, oauth-http…) on 127.0.0.1 (port 0, or `PORT` from
 * `options.env`) and resolves with its URL. A fixture listed in http-fixture-host.ts is served
 * inside this test worker by the same app code its entry file runs (no Node start: ~0.4 s CPU
 * saved each), with `process.env` and `options.env` as its env; any other, or any with
 * `options.process: true`, runs as a child process that prints its URL. Register `close` with
 * onTestFinished, or pass `options.cleanup`.
 */
export async function startFixtureHttp(name: string, options: FixtureOptions = {}): Promise<FixtureHttp> {
  const hosted = options.process ? undefined : hostedHttpFixture(name, options.args);
  if (hosted) {
    const app = await hosted({ ...process.env, ...options.env });
    options.cleanup?.(app.close);
    return { url: app.url, pid: process.pid, close: app.close };
  }
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
        await peersReadTheClose();
      }
    })());
  options.cleanup?.(close);
  const lines = createInterface({ input: child.stdout });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`fixture ${name} exited (${code ?? signal}) before listening:\n${stderr.join('')}`)));
    });
    return { url, pid: child.pid as number, close };
  } catch (err) {
    await close();
    throw err;
  } finally {
    lines.close();
  }
}
