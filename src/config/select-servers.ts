import { exaVerdict } from './exa.js';
import { pointsAtSelf, SELF_REFERENCE_MESSAGE } from './self-reference.js';
import type { DiscoveredItem, NativeSettings } from './providers/provider.js';
import type { DiscoveryResult, DiscoveryWarning, ServerConfig, ServerOutcome, TransportKind } from './types.js';
import { resolveTransportKind, validateServerConfig } from './validate.js';

export interface SelectOptions {
  enableProjectConfig: boolean;
  disabledServers: readonly string[];
  enabledServers: readonly string[];
  /** Ports of this daemon's own listener (see `DiscoveryOptions.selfPorts`). @default [] */
  selfPorts?: readonly number[];
}

export type Selection = Omit<DiscoveryResult, 'warnings'> & {
  outcomes: ServerOutcome[];
  /** One per invalid entry. */
  warnings: DiscoveryWarning[];
};

export const DEFAULT_SELECT_OPTIONS: SelectOptions = {
  enableProjectConfig: true,
  disabledServers: [],
  enabledServers: [],
};

export function selectOptions(settings: NativeSettings | undefined, enableProjectConfig?: boolean, selfPorts: readonly number[] = []): SelectOptions {
  const base = settings ?? DEFAULT_SELECT_OPTIONS;
  return {
    enableProjectConfig: enableProjectConfig ?? base.enableProjectConfig,
    disabledServers: base.disabledServers,
    enabledServers: base.enabledServers,
    selfPorts,
  };
}

/**
 * Decides every item's outcome. `items` must already be in precedence order. Filters run
 * before dedup, so a disabled, invalid or filtered entry never hides another one; then the
 * first entry wins its name and its connection.
 */
export function selectServers(items: readonly DiscoveredItem[], opts: SelectOptions): Selection {
  const sel: Selection = { configs: {}, sources: {}, shadowed: [], skipped: [], warnings: [], exaApiKeys: [], outcomes: [] };
  const byName = new Map<string, DiscoveredItem>();
  const byConnection = new Map<string, DiscoveredItem>();
  const disabled = new Set(opts.disabledServers);
  const enabled = new Set(opts.enabledServers);

  for (const item of items) {
    const { name, config, source } = item;
    const transport = resolveTransportKind(config);
    const base = { name, source, transport, config };

    if (!opts.enableProjectConfig && source.level === 'project') {
      sel.outcomes.push({ ...base, status: 'disabled', reason: 'project-config-disabled' });
      continue;
    }
    if (disabled.has(name)) {
      sel.outcomes.push({ ...base, status: 'disabled', reason: 'disabled-servers' });
      continue;
    }
    if (isSwitchedOff(config.enabled) && !enabled.has(name)) {
      sel.outcomes.push({ ...base, status: 'disabled', reason: 'enabled-false' });
      continue;
    }
    const errors = [...item.errors, ...validateServerConfig(name, config)];
    if (errors.length > 0) {
      sel.outcomes.push({ ...base, status: 'invalid', errors });
      sel.warnings.push({
        message: `${source.path}: server "${name}" is invalid: ${errors.join('; ')}`,
        path: source.path,
        provider: source.provider,
        server: name,
      });
      continue;
    }
    if (transport !== 'stdio' && pointsAtSelf(config.url, opts.selfPorts ?? [])) {
      sel.skipped.push({ name, source, reason: 'self', message: SELF_REFERENCE_MESSAGE });
      sel.outcomes.push({ ...base, status: 'skipped', reason: 'self', message: SELF_REFERENCE_MESSAGE });
      continue;
    }
    const exa = exaVerdict(name, config);
    if (exa.filtered) {
      for (const key of exa.apiKeys) if (!sel.exaApiKeys.includes(key)) sel.exaApiKeys.push(key);
      sel.outcomes.push({ ...base, status: 'filtered', reason: 'exa' });
      continue;
    }

    const key = connectionKey(config, transport as TransportKind);
    const winner = byName.get(name) ?? byConnection.get(key);
    if (winner) {
      const reason = byName.has(name) ? 'name' : 'same-connection';
      const shadowedBy = { name: winner.name, source: winner.source };
      sel.shadowed.push({ name, source, shadowedBy, reason });
      sel.outcomes.push({ ...base, status: 'shadowed', reason, shadowedBy });
      continue;
    }
    byName.set(name, item);
    byConnection.set(key, item);
    sel.configs[name] = config;
    sel.sources[name] = source;
    sel.outcomes.push({ ...base, status: 'active' });
  }
  return sel;
}

/** `enabled: false`, "false" or "0". */
export function isSwitchedOff(flag: ServerConfig['enabled']): boolean {
  return flag === false || flag === 'false' || flag === '0';
}

/**
 * Two entries are the same connection when they would start the same process (transport,
 * command, args, env, cwd) or talk to the same endpoint (transport, url, headers). Key order
 * of env/headers does not matter.
 */
export function connectionKey(cfg: ServerConfig, transport: TransportKind): string {
  const sorted = (rec: Record<string, string> | undefined): [string, string][] => Object.entries(rec ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return transport === 'stdio'
    ? JSON.stringify([transport, cfg.command, cfg.args ?? [], sorted(cfg.env), cfg.cwd ?? null])
    : JSON.stringify([transport, cfg.url, sorted(cfg.headers)]);
}
