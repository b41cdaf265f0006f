import type { Logger } from 'pino';
import type { AppliedServers, ReconcilePlan } from '../config/reconcile-plan.js';
import type { DiscoveryResult, DiscoveryWarning, ServerConfig, ServerSource } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { MCPManager, ServerError } from '../upstream/manager.js';

/**
 * Carries out a reconcile plan with the manager's public operations only: removed and changed
 * servers disconnect (removed ones are then forgotten), then `connect` servers connect. Returns
 * the connect failures (the manager logs each one as its status changes).
 */
export async function applyPlan(
  manager: Pick<MCPManager, 'hasServer' | 'disconnectServer' | 'forgetServer' | 'connectServers'>,
  plan: ReconcilePlan,
  connect: readonly string[],
  log: Pick<Logger, 'warn'>,
): Promise<ServerError[]> {
  const leaving = [...plan.removed, ...plan.changed].filter((name) => manager.hasServer(name));
  const results = await Promise.allSettled(leaving.map((name) => manager.disconnectServer(name)));
  for (const result of results) {
    if (result.status === 'rejected') log.warn({ err: errorMessage(result.reason) }, 'disconnect failed');
  }
  for (const name of plan.removed) manager.forgetServer(name);

  const configs: Record<string, ServerConfig> = {};
  const sources: Record<string, ServerSource> = {};
  for (const name of connect) {
    const entry = plan.next[name];
    if (!entry) continue;
    configs[name] = entry.config;
    sources[name] = entry.source;
  }
  const { errors } = await manager.connectServers(configs, sources, { cause: 'reload' });
  return errors;
}

/**
 * A discovery as `/status` shows it once applied: the configs and sources that run, and a
 * warning for each server kept on its last good config.
 */
export function discoveryAsApplied(discovery: DiscoveryResult, applied: AppliedServers, kept: readonly string[]): DiscoveryResult {
  const keptWarnings: DiscoveryWarning[] = kept.map((name) => {
    const path = applied[name]?.source.path;
    return {
      message: `${path}: server "${name}" keeps its last good config until the file is valid again`,
      ...(path ? { path } : {}),
      server: name,
    };
  });
  return {
    ...discovery,
    configs: Object.fromEntries(Object.entries(applied).map(([name, e]) => [name, e.config])),
    sources: Object.fromEntries(Object.entries(applied).map(([name, e]) => [name, e.source])),
    warnings: [...discovery.warnings, ...keptWarnings],
  };
}

/** The servers of a discovery, as the runtime records what it started. */
export function appliedOf(configs: Readonly<Record<string, ServerConfig>>, sources: Readonly<Record<string, ServerSource>>): AppliedServers {
  const UNKNOWN: ServerSource = { provider: 'api', providerName: 'API', path: '', level: 'native' };
  return Object.fromEntries(Object.entries(configs).map(([name, config]) => [name, { config, source: sources[name] ?? UNKNOWN }]));
}
