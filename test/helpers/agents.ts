import { expect } from 'vitest';
import { startDaemon, type TestDaemon } from './daemon.js';
import { fixtureServerConfig } from './fixtures.js';

/** The operator key (`token`) of the agent tests' daemons. */
export const OPERATOR_TOKEN = 'operator-secret-token-0123456789';

/** `POST /agents` as the operator; resolves with the new agent's key (issue #22). */
export async function addAgentKey(d: TestDaemon, body: Record<string, unknown>): Promise<string> {
  const res = await d.json<{ key: string }>('/agents', { method: 'POST', body });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** A daemon with the operator token and two real rich fixtures, `alpha` and `beta` (tools, prompts, resources, templates each). */
export function startTwoRichServers(lifetime: 'test' | 'manual' = 'test'): Promise<TestDaemon> {
  return startDaemon({
    lifetime,
    servers: {
      alpha: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: 'alpha' } }),
      beta: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy', URI_SCHEME: 'beta' } }),
    },
    config: { token: OPERATOR_TOKEN },
  });
}
