import { resolve } from 'node:path';
import { errorMessage } from '../errors.js';
import { resolveConfigPath } from './load.js';
import { DEFAULT_PROVIDERS } from './providers/index.js';
import type { ConfigProvider, DiscoveredItem, NativeSettings, ProviderContext } from './providers/provider.js';
import { selectOptions, selectServers } from './select-servers.js';
import type { DiscoveryOptions, DiscoveryReport, DiscoveryWarning, RestartSettings, SourceLevel } from './types.js';

/** Within one provider, project-level entries win over user-level ones. */
const LEVEL_RANK: Record<SourceLevel, number> = { native: 0, project: 0, user: 1 };

/**
 * Finds every MCP server configured on this machine for `options.cwd` (SPEC §2). Never throws
 * because of a file: each provider's failure becomes a warning and the others still count.
 * `configs` holds only the active servers; `outcomes` explains every entry found.
 */
export async function discoverMCPServers(options: DiscoveryOptions, providers: readonly ConfigProvider[] = DEFAULT_PROVIDERS): Promise<DiscoveryReport> {
  const cwd = resolve(options.cwd);
  const ctx: ProviderContext = {
    cwd,
    home: options.home,
    env: options.env,
    platform: options.platform ?? process.platform,
    ...(options.configPath === undefined ? {} : { configPath: options.configPath }),
  };

  // Each read is wrapped in an async function so a synchronous throw is caught too.
  const results = await Promise.allSettled(providers.map(async (p) => p.read(ctx)));

  const warnings: DiscoveryWarning[] = [];
  const files = new Set<string>();
  const failedFiles = new Set<string>();
  const ranked: { item: DiscoveredItem; priority: number; index: number }[] = [];
  let settings: NativeSettings | undefined;
  let restartSettings: RestartSettings | undefined;
  results.forEach((result, i) => {
    const provider = providers[i] as ConfigProvider;
    if (result.status === 'rejected') {
      warnings.push({
        message: `${provider.displayName}: provider failed: ${errorMessage(result.reason)}`,
        provider: provider.id,
      });
      return;
    }
    warnings.push(...result.value.warnings);
    for (const file of result.value.files ?? []) files.add(file);
    for (const file of result.value.failedFiles ?? []) failedFiles.add(file);
    settings ??= result.value.settings;
    restartSettings ??= result.value.restartSettings;
    for (const item of result.value.items) ranked.push({ item, priority: provider.priority, index: ranked.length });
  });

  ranked.sort((a, b) => b.priority - a.priority || LEVEL_RANK[a.item.source.level] - LEVEL_RANK[b.item.source.level] || a.index - b.index);
  const selection = selectServers(
    ranked.map((r) => r.item),
    selectOptions(settings, options.enableProjectConfig, options.selfPorts),
  );
  const configPath = resolveConfigPath({
    path: options.configPath,
    env: options.env,
    home: options.home,
    cwd,
  }).path;
  const invalid = selection.outcomes.filter((o) => o.status === 'invalid').map((o) => ({ name: o.name, path: o.source.path }));
  return {
    ...selection,
    warnings: [...warnings, ...selection.warnings],
    configPath,
    files: [...files],
    failedFiles: [...failedFiles],
    invalid,
    ...(restartSettings ? { restartSettings } : {}),
    // Only from a usable file of Switchboard's own: a file ignored for a bad rule leaves the rules in force as they are.
    ...(settings?.policies ? { policies: settings.policies } : {}),
  };
}
