import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { expect, onTestFinished } from 'vitest';
import type { DaemonConfigInput } from '../../src/config/schema.js';
import { startDaemon, type StartDaemonOptions, type TestDaemon } from './daemon.js';
import { fixtureServerConfig } from './fixtures.js';

/** The operator key (`token`) of the agent tests' daemons. */
export const OPERATOR_TOKEN = 'operator-secret-token-0123456789';

/** `POST /agents` as the operator; resolves with the new agent's key (issue #22). */
export async function addAgentKey(d: TestDaemon, body: Record<string, unknown>): Promise<string> {
  const res = await d.json<{ key: string }>('/agents', { method: 'POST', body });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** A daemon with the operator token and two real rich fixtures, `alpha` and `beta` (tools, prompts, resources, templates each); `config` adds settings. */
export function startTwoRichServers(lifetime: 'test' | 'manual' = 'test', config: Partial<DaemonConfigInput> = {}, options: Pick<StartDaemonOptions, 'captureLogs' | 'deps'> = {}): Promise<TestDaemon> {
  return startDaemon({
    ...options,
    lifetime,
    servers: {
      alpha: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: 'alpha' } }),
      beta: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: 'beta' } }),
    },
    config: { token: OPERATOR_TOKEN, ...config },
  });
}

/** The two protocol eras an agent's client can speak, as `[name, versionNegotiation mode]`. */
export const AGENT_ERAS = [['2025-11-25', 'legacy'], ['2026-07-28', { pin: '2026-07-28' }]] as const;

/**
 * An SDK client on `d`'s `/mcp` with an agent's key, in `era`, declaring `capabilities` (none by
 * default); closed when the test finishes.
 */
export async function agentClient(d: TestDaemon, key: string, era: (typeof AGENT_ERAS)[number][1] = { pin: '2026-07-28' }, capabilities?: ClientCapabilities): Promise<Client> {
  const client = new Client({ name: 'agent', version: '1.0.0' }, { versionNegotiation: { mode: era }, ...(capabilities ? { capabilities } : {}) });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', d.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  onTestFinished(() => client.close());
  return client;
}
