import type { Tool } from '@modelcontextprotocol/client';
import {
  CACHE_FORMAT_VERSION,
  CACHE_MAX_AGE_MS,
  type AuditEntry,
  type AuditKind,
  type AuditOutcome,
  type CachedToolList,
  type ClientOrigin,
  type ListHints,
  type PendingSignIn,
  type StoredAgent,
  type StoredAgentKey,
  type StoredAuditEntry,
  type StoredClient,
  type StoredDiscovery,
  type StoredTokens,
  type StoredVerdict,
  type ToolPin,
} from './ports.js';

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
  run_id: string | null;
}

export interface ToolCacheRow {
  config_hash: string;
  format_version: number;
  tools_json: string;
  cached_at: number;
  hints_json: string | null;
}

export interface VerdictRow {
  config_hash: string;
  verdict_json: string;
  probed_at: number;
}

export interface PinRow {
  tool: string;
  hash: string;
  definition_json: string;
  pinned_at: number;
}

export interface ClientRow {
  issuer: string;
  client_json: string;
  origin: ClientOrigin;
}

export interface DiscoveryRow {
  state_json: string | null;
  resource_url: string | null;
}

export interface StateRow {
  value: string;
}

export interface CredentialRow {
  token: string;
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

/** The audit table's columns an entry writes, in order: both backends insert them so. */
export const AUDIT_INSERT_COLUMNS = 'ts, agent, transport, server, kind, name, outcome, code, duration_ms, arg_bytes, result_bytes, args_json, run_id';

export type AuditRowValues = [number, string | null, string, string, string, string, string, string | null, number, number, number, string | null, string | null];

/** An entry's values for `AUDIT_INSERT_COLUMNS`, in their order (the write side of `auditEntryOf`). */
export function auditRowValues(e: AuditEntry): AuditRowValues {
  return [e.ts, e.agent ?? null, e.transport, e.server, e.kind, e.name, e.outcome, e.code ?? null, e.durationMs, e.argBytes, e.resultBytes, e.arguments ?? null, e.runId ?? null];
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
    ...(row.run_id !== null && row.run_id !== undefined ? { runId: row.run_id } : {}),
  };
}

/** Why a cached tool list is not used (the SQLite store logs it at debug). */
export type CacheMiss = 'absent' | 'format version' | 'config changed' | 'expired' | 'unreadable' | 'empty';

/** The cached list of a row when it still holds for this config at `now`, else why not. */
export function cachedToolListOf(row: ToolCacheRow | undefined, server: string, configHash: string, now: number): CachedToolList | CacheMiss {
  if (!row) return 'absent';
  if (row.format_version !== CACHE_FORMAT_VERSION) return 'format version';
  if (row.config_hash !== configHash) return 'config changed';
  if (now - row.cached_at > CACHE_MAX_AGE_MS) return 'expired';
  const tools = parseTools(row.tools_json);
  if (!tools) return 'unreadable';
  if (tools.length === 0) return 'empty';
  const hints = parseHints(row.hints_json);
  return { server, configHash, formatVersion: row.format_version, tools, cachedAt: row.cached_at, ...(hints ? { hints } : {}) };
}

/** The verdict of a row probed under this config; none for another config or unreadable text. */
export function verdictOf(row: VerdictRow | undefined, configHash: string): StoredVerdict | undefined {
  if (!row || row.config_hash !== configHash) return undefined;
  const verdict = parseVerdict(row.verdict_json);
  return verdict ? { verdict, probedAt: row.probed_at } : undefined;
}

/** The pin of a row; none when its definition is not a JSON object (for `flatMap`). */
export function pinsOf(row: PinRow): ToolPin[] {
  const definition = parseObject(row.definition_json);
  return definition ? [{ tool: row.tool, hash: row.hash, definition, pinnedAt: row.pinned_at }] : [];
}

export function clientOf(row: Omit<ClientRow, 'issuer'>): StoredClient {
  return { info: parseJson(row.client_json), origin: row.origin };
}

export function discoveryOf(row: DiscoveryRow | undefined): StoredDiscovery {
  return { state: row?.state_json ? parseJson(row.state_json) : undefined, resourceUrl: row?.resource_url ?? undefined };
}

function parseHints(json: string | null): ListHints | undefined {
  if (json === null) return undefined;
  try {
    const value = JSON.parse(json) as Record<string, unknown>;
    const hints: ListHints = {};
    if (typeof value.ttlMs === 'number' && value.ttlMs >= 0) hints.ttlMs = value.ttlMs;
    if (value.cacheScope === 'public' || value.cacheScope === 'private') hints.cacheScope = value.cacheScope;
    return hints;
  } catch {
    return undefined;
  }
}

function parseVerdict(json: string): StoredVerdict['verdict'] | undefined {
  try {
    const value = JSON.parse(json) as { kind?: unknown; discover?: unknown };
    if (value.kind === 'legacy') return { kind: 'legacy' };
    if (value.kind === 'modern' && typeof value.discover === 'object' && value.discover !== null) {
      return { kind: 'modern', discover: value.discover as Record<string, unknown> };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** A row is only as trustworthy as the file; anything but an array of named tools is a miss. */
function parseTools(json: string): Tool[] | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (!Array.isArray(value)) return undefined;
    const named = value.every((tool) => typeof (tool as { name?: unknown } | null)?.name === 'string');
    return named ? (value as Tool[]) : undefined;
  } catch {
    return undefined;
  }
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

/** A `tasks` row as read back, on both backends: the task's JSON document (issue #41). */
export interface TaskRow {
  document: string;
}

/** A row of `budget_usage` (issue #38), on both backends. */
export interface BudgetRow {
  window: string;
  tokens: number | string;
}

/** The counts of `windows` from their rows (PostgreSQL's bigint comes as a string); 0 for a window without one. */
export function budgetCounts(rows: readonly BudgetRow[], windows: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(windows.map((window) => [window, 0]));
  for (const row of rows) counts[row.window] = Number(row.tokens);
  return counts;
}
