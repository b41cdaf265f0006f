import { startDualAsksHttp } from '../fixtures/servers/lib/dual-asks-http-app.js';
import { startEchoHttp } from '../fixtures/servers/lib/echo-http-app.js';
import { startEchoSse } from '../fixtures/servers/lib/echo-sse-app.js';
import { startEraHttp } from '../fixtures/servers/lib/era-http-app.js';
import { startGoneThenBadHttp } from '../fixtures/servers/lib/gone-then-bad-http-app.js';
import type { FixtureEnv, HttpApp } from '../fixtures/servers/lib/http.js';
import { startOAuthHttp } from '../fixtures/servers/lib/oauth-http-app.js';
import { startRichHttp } from '../fixtures/servers/lib/rich-http-app.js';
import { startTraceMetaHttp } from '../fixtures/servers/lib/trace-meta-app.js';

/**
 * The HTTP fixtures, by name and args, `startFixtureHttp` serves inside the test worker: the same app function the
 * fixture's entry file runs as a process (test/fixtures/servers/lib/<name>-app.ts), on a real
 * node:http server, without a Node start (~0.4 s CPU each: Node boot plus the SDK and zod, which
 * the worker has loaded already).
 *
 * Not here, so still a process of their own:
 * - `native-tasks --http`: the entry is a stdio fixture too, with its state (the tasks, their
 *   timers and file waits) at module level; not split into an app yet. One start per suite run.
 * - any fixture started with `options.process: true`: a test that needs the server's own pid, its
 *   stdout/stderr, or to signal, pause or kill it.
 */
const HOSTED: Readonly<Record<string, (env: FixtureEnv) => Promise<HttpApp>>> = {
  'dual-asks-http': startDualAsksHttp,
  'echo-http': startEchoHttp,
  'echo-sse': startEchoSse,
  'era-http': startEraHttp,
  'gone-then-bad-http': startGoneThenBadHttp,
  'oauth-http': startOAuthHttp,
  'rich-http': startRichHttp,
  'trace-meta --http': startTraceMetaHttp,
};

/** The app of fixture `name` started with `args`, when it can be hosted in the worker; else undefined. */
export function hostedHttpFixture(name: string, args: readonly string[] = []): ((env: FixtureEnv) => Promise<HttpApp>) | undefined {
  return HOSTED[[name, ...args].join(' ')];
}
