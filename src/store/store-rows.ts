import type { AuditEntry, AuditKind, AuditOutcome, PendingSignIn, StoredAgent, StoredAgentKey, StoredAuditEntry, StoredTokens } from './ports.js';

/**
 * The rows both backends read (SQLite and PostgreSQL share table and column names) and what
 * each becomes through its port: one definition, so the two stores cannot drift apart.
 */

export interface AgentRow {
  name: string;
  settings_json: string;
  created_at: number;
  revoked_at: number | null;
}

export interface KeyRow {
  id: string;
  agent: string;
  salt: Buffer;
  hash: Buffer;
  created_at: number;
  revoked_at: number | null;
}

export interface TokenRow {
  issuer: string;
  tokens_json: string;
  expires_at: number | null;
  saved_at: number;
}

export interface PendingRow {
  server: string;
  auth_hash: string;
  code_verifier: string | null;
  expires_at: number;
}

export interface AuditRow {
  id: number;
  ts: number;
  agent: string | null;
  transport: AuditEntry['transport'];
  server: string;
  kind: AuditKind;
  name: string;
  outcome: AuditOutcome;
  code: string | null;
  duration_ms: number;
  arg_bytes: number;
  result_bytes: number;
  args_json: string | null;
}

/** The agent of a row; none when its settings are not a JSON object (for `flatMap`). */
export function agentsOf(row: AgentRow): StoredAgent[] {
  const settings = parseObject(row.settings_json);
  if (!settings) return [];
  return [{ name: row.name, settings, createdAt: row.created_at, ...(row.revoked_at !== null ? { revokedAt: row.revoked_at } : {}) }];
}

export function keyOf(row: KeyRow): StoredAgentKey {
  return {
    id: row.id,
    agent: row.agent,
    salt: row.salt,
    hash: row.hash,
    createdAt: row.created_at,
    ...(row.revoked_at !== null ? { revokedAt: row.revoked_at } : {}),
  };
}

export function tokensOf(row: TokenRow | undefined): StoredTokens | undefined {
  if (!row) return undefined;
  return { issuer: row.issuer, tokens: parseJson(row.tokens_json), expiresAt: row.expires_at ?? undefined, savedAt: row.saved_at };
}

export function pendingOf(row: PendingRow): PendingSignIn {
  return { server: row.server, authHash: row.auth_hash, codeVerifier: row.code_verifier ?? undefined, expiresAt: row.expires_at };
}

export function auditEntryOf(row: AuditRow): StoredAuditEntry {
  return {
    id: row.id,
    ts: row.ts,
    ...(row.agent !== null ? { agent: row.agent } : {}),
    transport: row.transport,
    server: row.server,
    kind: row.kind,
    name: row.name,
    outcome: row.outcome,
    ...(row.code !== null ? { code: row.code } : {}),
    durationMs: row.duration_ms,
    argBytes: row.arg_bytes,
    resultBytes: row.result_bytes,
    ...(row.args_json !== null ? { arguments: row.args_json } : {}),
  };
}

/** A stored JSON object (the store wrote it; a value that is not one throws). */
export function parseJson(json: string): Record<string, unknown> {
  return JSON.parse(json) as Record<string, unknown>;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
