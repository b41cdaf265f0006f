/**
 * The store ports of the gateway's access control (issue #22): agents with their key hashes, and
 * the audit log. The rules of `ports.ts` hold here too (promises, no rejections, ordered writes).
 */

// --- agents and their keys ------------------------------------------------------------------

/** An agent created with `switchboard agents add` (issue #22); config agents are not stored. */
export interface StoredAgent {
  name: string;
  /** Its settings as validated JSON (servers, tools, access, …); opaque to the store. */
  settings: Record<string, unknown>;
  createdAt: number;
  /** When it was revoked; its name and keys stay, so a revoked key is recognised as such. */
  revokedAt?: number;
}

/** One issued key: never the key itself, only a salted SHA-256 of its secret part. */
export interface StoredAgentKey {
  /** The public part of the key (`sbk_<id>_…`), for a lookup without scanning. */
  id: string;
  agent: string;
  salt: Buffer;
  hash: Buffer;
  createdAt: number;
  revokedAt?: number;
}

/**
 * Agents and their key hashes. Small: the registry reads everything once at start and keeps it
 * in memory, writing through on every change.
 */
export interface AgentStore {
  agents(): Promise<StoredAgent[]>;
  keys(): Promise<StoredAgentKey[]>;
  /** Creates or replaces the agent (a revoked one re-added starts over). */
  putAgent(agent: StoredAgent): Promise<void>;
  putKey(key: StoredAgentKey): Promise<void>;
  /** Marks the agent and every key of it revoked. */
  revokeAgent(name: string, now: number): Promise<void>;
  /** Marks every key of the agent revoked (rotation), keeping the agent. */
  revokeKeys(agent: string, now: number): Promise<void>;
}

// --- audit log ------------------------------------------------------------------------------

/** How an audited request ended. `denied`: outside the agent's view or refused by an operator. */
export const AUDIT_OUTCOMES = ['ok', 'error', 'not_found', 'denied', 'timeout', 'cancelled'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** What the audit log records: a tool call, a prompt get, a resource read, an operator's decision, or a shadow policy's would-be denial. */
export type AuditKind = 'tools/call' | 'prompts/get' | 'resources/read' | 'results/read' | 'approval' | 'policy';

/** One audited request (issue #22 item 4). Never holds a secret: argument values are redacted before. */
export interface AuditEntry {
  /** When the request started, in ms since the epoch. */
  ts: number;
  /** The agent whose key the request carried; absent for the operator and without keys. */
  agent?: string;
  transport: 'rest' | 'mcp' | 'operator';
  /** The owning server; '' when the name matched none. */
  server: string;
  kind: AuditKind;
  /** The exposed tool or prompt name, or the resource URI. */
  name: string;
  outcome: AuditOutcome;
  /** The stable error code of a failure. */
  code?: string;
  durationMs: number;
  /** Bytes of the arguments as JSON (0 without arguments). */
  argBytes: number;
  /** Bytes of the result as JSON (0 when the request failed). */
  resultBytes: number;
  /** The arguments as JSON with secret values masked; only with `audit.arguments: true`. */
  arguments?: string;
  /** The code-mode run (issue #39) whose script made the request. */
  runId?: string;
}

/** A stored entry with its place in the log. */
export type StoredAuditEntry = AuditEntry & { id: number };

export interface AuditQuery {
  agent?: string;
  server?: string;
  /** The tool or prompt name, or the resource URI. */
  name?: string;
  outcome?: AuditOutcome;
  /** Entries at or after this time (ms since the epoch). */
  since?: number;
  /** Only the requests of this code-mode run. */
  runId?: string;
  /** Newest first, at most this many. */
  limit: number;
}

/**
 * The audit log's storage. Writes come in batches (the log queues entries in memory and hands
 * them over together), so a backend can write a batch in one transaction.
 */
export interface AuditStore {
  append(entries: readonly AuditEntry[]): Promise<void>;
  /** Newest first. */
  query(query: AuditQuery): Promise<StoredAuditEntry[]>;
  /** Deletes entries older than `before` (ms since the epoch) and all but the newest `maxRows`. Resolves with how many went. */
  trim(before: number, maxRows: number): Promise<number>;
  close(): Promise<void>;
}

// --- token budgets (issue #38 item 4) ---------------------------------------------------------

/**
 * What the gateway handed each agent, in tokens, per time window (`h:2026-12-05T12` for an hour,
 * `d:2026-12-05` for a day, UTC): one count for every replica on the same database.
 */
export interface BudgetStore {
  /** Adds `tokens` to each window's count and answers the counts now (the whole cluster's). Never rejects. */
  add(agent: string, windows: readonly string[], tokens: number, now: number): Promise<Record<string, number>>;
  /** The agent's counts in these windows (0 for a window without one). Never rejects. */
  spent(agent: string, windows: readonly string[]): Promise<Record<string, number>>;
}

// --- cluster-wide rate limits (issue #43 item 1) ----------------------------------------------

/** One agent's bucket as the shared store answered a take. */
export interface SharedBucketAnswer {
  /** Whether the take got a token. */
  taken: boolean;
  /** Tokens left in the cluster's bucket after it (fractional: the refill is continuous). */
  tokens: number;
  /** Replicas with a recent heartbeat: each one's share while the store is away. At least 1. */
  replicas: number;
}

/**
 * Per-agent token buckets every replica on one database takes from (issue #43 item 1): one
 * bucket per agent for the cluster, refilled continuously at `perMs` up to `capacity`.
 */
export interface SharedRateLimits {
  /**
   * Takes one token from `agent`'s bucket at time `now` (ms) in one atomic statement. A bucket
   * whose `settings` changed starts full. Undefined when the database could not answer (the
   * caller then limits locally). Never rejects.
   */
  take(agent: string, settings: string, capacity: number, perMs: number, now: number): Promise<SharedBucketAnswer | undefined>;
}
