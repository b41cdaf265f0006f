import type { AgentSettings } from '../../config/agent-schema.js';

/** The shapes the agent registry (agent-registry.ts) answers with. */

/** Where an agent was defined: the config's `agents` table, or `switchboard agents add`. */
export type AgentSource = 'config' | 'cli';
export type AgentStatus = 'active' | 'expired' | 'revoked' | 'no-key';

/** An agent as the request path needs it: its name and every setting (its view, limits, approvals). */
export interface Agent {
  readonly name: string;
  readonly source: AgentSource;
  readonly settings: Readonly<AgentSettings>;
}

/** What `GET /agents` shows of an agent: never a key, a hash or a salt. */
export type AgentInfo = AgentSettings & {
  name: string;
  source: AgentSource;
  status: AgentStatus;
  /** Whether its key comes from the config file (then only the file changes it). */
  keyInConfig: boolean;
  createdAt?: string;
  revokedAt?: string;
};

/** Who a presented key is. */
export type KeyVerdict = { kind: 'operator' } | { kind: 'agent'; agent: Agent } | { kind: 'unknown' | 'expired' | 'revoked' };
