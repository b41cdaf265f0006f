import { createHash } from 'node:crypto';
import { canonicalJson } from './config-hash.js';
import type { DiscoveryWarning, RestartSettings } from './types.js';

/**
 * Settings of Switchboard's own file that a running daemon applies live (SPEC §8): its servers,
 * the lists that switch them on and off, and the argument policies (issue #40). Every other setting (`host`, `port`, `token`,
 * `logLevel`, …) was read once, at start.
 */
const LIVE_KEYS = new Set(['$schema', 'mcpServers', 'disabledServers', 'enabledServers', 'policies']);

/** The restart-only settings of a validated file (defaults included: deleting `port` changes it too). */
export function restartSettingsOf(path: string, settings: Readonly<Record<string, unknown>>): RestartSettings {
  const digests: Record<string, string> = {};
  for (const [key, value] of Object.entries(settings)) {
    if (LIVE_KEYS.has(key) || value === undefined) continue;
    digests[key] = createHash('sha256').update(canonicalJson(value)).digest('hex');
  }
  return { path, digests };
}

/** The settings that differ between what the daemon started with and the file now, sorted. */
export function changedRestartSettings(started: RestartSettings, now: RestartSettings): string[] {
  const keys = new Set([...Object.keys(started.digests), ...Object.keys(now.digests)]);
  return [...keys].filter((key) => started.digests[key] !== now.digests[key]).sort();
}

/** The warning `/status` and the log show while the file asks for something only a restart applies. */
export function restartWarning(started: RestartSettings | undefined, now: RestartSettings | undefined): DiscoveryWarning | undefined {
  if (!started || !now || started.path !== now.path) return undefined;
  const keys = changedRestartSettings(started, now);
  if (keys.length === 0) return undefined;
  const which = keys.map((key) => `"${key}"`).join(', ');
  return {
    message: `${now.path}: ${which} changed; ${keys.length === 1 ? 'it takes' : 'they take'} effect at the next start (restart Switchboard to apply)`,
    path: now.path,
    provider: 'switchboard',
  };
}
