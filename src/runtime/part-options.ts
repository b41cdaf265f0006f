import { dirname } from 'node:path';
import type { DaemonConfig } from '../config/schema.js';
import type { SandboxContext } from '../upstream/process/sandbox-plan.js';
import type { ApprovalOutcome } from '../events/daemon-events.js';
import type { ApprovalDecision } from '../gateway/approvals/approvals.js';
import type { ScriptSettings } from '../gateway/scripts/script-runs.js';
import type { AuditLog } from '../gateway/audit/audit-log.js';
import type { HealthOptions } from '../upstream/manager.js';
import { openAuditStore } from '../store/audit-store.js';
import { openMemoryOAuthStore, type OpenedStores } from '../store/open-tool-cache.js';
import { MemoryAgentStore } from '../store/agent-store.js';
import { MemoryStateStore } from '../store/state-store.js';
import { MemoryToolPinStore } from '../store/tool-pin-store.js';
import type { AuditOutcome, ToolCacheStore } from '../store/ports.js';

/** The settings the daemon's parts read of its config. */
export type PartsConfig = Pick<DaemonConfig, 'startupGateMs' | 'trustProjectCommands' | 'inheritEnv' | 'protocol' | 'health' | 'watch' | 'logLevel'> &
  Partial<
    Pick<
      DaemonConfig,
      'dbPath' | 'enableProjectConfig' | 'approvalTimeoutMs' | 'approvalPrompt' | 'approvalUrl' | 'agents' | 'token' | 'pinTools' | 'audit' | 'maxConcurrentCalls' | 'queueSize'
    >
  >;

/** An operator's approval decision, recorded in the audit log with the call's arguments (issue #22). */
export function auditDecision(audit: Pick<AuditLog, 'recordWithArguments'>, decision: ApprovalDecision, args: Record<string, unknown>): void {
  const requestedAt = Date.parse(decision.requestedAt);
  audit.recordWithArguments(
    {
      ts: requestedAt,
      ...(decision.agent !== undefined ? { agent: decision.agent } : {}),
      transport: 'operator',
      server: decision.server,
      kind: 'approval',
      name: decision.name,
      outcome: APPROVAL_AUDIT_OUTCOME[decision.outcome],
      durationMs: Date.parse(decision.decidedAt) - requestedAt,
      resultBytes: 0,
    },
    args,
  );
}

/** An approval decision as an audit outcome. */
const APPROVAL_AUDIT_OUTCOME = { approved: 'ok', denied: 'denied', timeout: 'timeout', withdrawn: 'cancelled' } as const satisfies Record<ApprovalOutcome, AuditOutcome>;

/** `health: true | false | {…}` and the traffic limits of the config file → the manager's health options. */
export function healthOptions(health: PartsConfig['health'], limits: Pick<PartsConfig, 'maxConcurrentCalls' | 'queueSize'>): HealthOptions {
  const traffic = {
    ...(limits.maxConcurrentCalls !== undefined ? { maxConcurrentCalls: limits.maxConcurrentCalls } : {}),
    ...(limits.queueSize !== undefined ? { queueSize: limits.queueSize } : {}),
  };
  if (typeof health === 'boolean') return { enabled: health, ...traffic };
  return { enabled: health.enabled, pingIntervalMs: health.pingIntervalMs, pingTimeoutMs: health.pingTimeoutMs, ...traffic };
}

/** The stores that go with an embedder's own tool cache: state and sign-ins last as long as this process. */
export function besideOwnCache(store: ToolCacheStore): OpenedStores {
  const oauth = openMemoryOAuthStore();
  return {
    store,
    state: new MemoryStateStore(),
    oauth,
    credentials: oauth.credentials,
    agents: new MemoryAgentStore(),
    pins: new MemoryToolPinStore(),
    audit: openAuditStore(undefined, true),
    warnings: [],
  };
}

/**
 * What sandboxed stdio servers get of the daemon (issue #42): its `sandbox` default, and the paths
 * they must never see — the state folder (the SQLite store, the operator key, the child records)
 * and the config file.
 */
export function sandboxContext(config: Pick<DaemonConfig, 'sandbox'>, where: { home: string; env: NodeJS.ProcessEnv; dbPath: string; configPath: string }): SandboxContext {
  const hidden = [where.configPath, ...(where.dbPath === ':memory:' ? [] : [dirname(where.dbPath)])];
  return { ...(config.sandbox !== undefined ? { defaults: config.sandbox } : {}), home: where.home, hidden, env: where.env };
}

/** Code mode's settings (issue #39) from `codeMode` and `scripts`. */
export function scriptSettings(config: Partial<Pick<DaemonConfig, 'codeMode' | 'scripts'>>): ScriptSettings {
  const { maxRuns, maxRunsPerAgent, memoryMb, ...limits } = config.scripts ?? {};
  return {
    enabled: config.codeMode ?? false,
    ...(maxRuns !== undefined ? { maxRuns } : {}),
    ...(maxRunsPerAgent !== undefined ? { maxRunsPerAgent } : {}),
    limits: { ...limits, ...(memoryMb !== undefined ? { memoryBytes: memoryMb * 1024 * 1024 } : {}) },
  };
}
