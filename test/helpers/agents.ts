import { Client, type ClientCapabilities } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import type { DaemonConfigInput } from '../../src/config/schema.js';
import { startDaemon, type StartDaemonOptions, type TestDaemon } from './daemon.js';
import type { ServerConfig } from '../../src/config/types.js';
import { fixtureServerConfig, startFixtureHttp, type FixtureHttp } from './fixtures.js';
import { sharedByTests } from './shared.js';
import { mcpClient } from './mcp-client.js';

/** The operator key (`token`) of the agent tests' daemons. */
export const OPERATOR_TOKEN = 'operator-secret-token-0123456789';

/** `POST /agents` as the operator; resolves with the new agent's key (issue #22). */
export async function addAgentKey(d: TestDaemon, body: Record<string, unknown>): Promise<string> {
  const res = await d.json<{ key: string }>('/agents', { method: 'POST', body });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** The `alpha` and `beta` rich servers over HTTP, for `startTwoRichServers` (see `sharedTwoRichUpstreams`). */
export interface TwoRichUpstreams {
  alpha: FixtureHttp;
  beta: FixtureHttp;
}

/**
 * A daemon with the operator token and two real rich fixtures, `alpha` and `beta` (tools, prompts,
 * resources, templates each); `config` adds settings. They are stdio servers of its own, or with
 * `upstreams` sessions on those HTTP fixtures (one server per session: the same state per daemon).
 */
export function startTwoRichServers(
  lifetime: 'test' | 'manual' = 'test',
  config: Partial<DaemonConfigInput> = {},
  options: Pick<StartDaemonOptions, 'captureLogs' | 'deps'> & { upstreams?: TwoRichUpstreams } = {},
): Promise<TestDaemon> {
  const { upstreams, ...rest } = options;
  const rich = (scheme: 'alpha' | 'beta'): ServerConfig =>
    upstreams ? { type: 'http', url: upstreams[scheme].url } : fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: scheme } });
  return startDaemon({
    ...rest,
    lifetime,
    servers: { alpha: rich('alpha'), beta: rich('beta') },
    config: { token: OPERATOR_TOKEN, ...config },
  });
}

/**
 * The `upstreams` of `startTwoRichServers` (2025-era rich-http fixtures with URI schemes `alpha`
 * and `beta`), started by the first test that asks and closed after the file's (or describe's)
 * tests; call it where `afterAll` may be registered. For tests about views and keys, not stdio:
 * each daemon then opens two sessions instead of spawning two processes.
 */
export function sharedTwoRichUpstreams(): () => Promise<TwoRichUpstreams> {
  return sharedByTests(
    async () => {
      const started = await Promise.allSettled((['alpha', 'beta'] as const).map((scheme) => startFixtureHttp('rich-http', { env: { ERA: 'legacy', URI_SCHEME: scheme } })));
      const [alpha, beta] = started.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : undefined));
      if (alpha === undefined || beta === undefined) {
        await Promise.all([alpha?.close(), beta?.close()]);
        throw (started.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason;
      }
      return { alpha, beta };
    },
    async ({ alpha, beta }) => {
      await Promise.all([alpha.close(), beta.close()]);
    },
  );
}

/** The two protocol eras an agent's client can speak, as `[name, versionNegotiation mode]`. */
export const AGENT_ERAS = [
  ['2025-11-25', 'legacy'],
  ['2026-07-28', { pin: '2026-07-28' }],
] as const;

/**
 * An SDK client on `d`'s `/mcp` with an agent's key, in `era`, declaring `capabilities` (none by
 * default); closed when the test finishes.
 */
export function agentClient(d: TestDaemon, key: string, era: (typeof AGENT_ERAS)[number][1] = { pin: '2026-07-28' }, capabilities?: ClientCapabilities): Promise<Client> {
  return mcpClient(d.url, { key, era, name: 'agent', ...(capabilities ? { capabilities } : {}) });
}
