import { checkDaemonFile } from '../daemon-file.js';
import { standardDialect } from '../dialects.js';
import { EntryReader } from '../entry-reader.js';
import { isPlainObject, predefinedVars } from '../expand-vars.js';
import { issueText } from '../issues.js';
import { preparePolicyLanguage } from '../policy-cel.js';
import { resolveConfigPath } from '../load.js';
import { unresolvedPlaceholders } from '../placeholders.js';
import { readConfigFile } from '../read-config-file.js';
import { restartSettingsOf } from '../restart-settings.js';
import { DaemonSettingsSchema } from '../schema.js';
import type { ServerConfig, ServerSource } from '../types.js';
import type { ConfigProvider, DiscoveredItem, ProviderResult } from './provider.js';

/**
 * Switchboard's own file (level `native`), validated with the daemon schema. Unlike other
 * tools' files it is strict: an unknown key in an entry makes that entry invalid. A problem in
 * the settings drops the whole file (with warnings) rather than half-applying it, since a lost
 * `disabledServers` list would quietly start servers the user switched off.
 */
const ID = 'switchboard';
const NAME = 'Switchboard';

export const nativeProvider: ConfigProvider = {
  id: ID,
  displayName: NAME,
  priority: 100,
  async read(ctx): Promise<ProviderResult> {
    const { path, explicit } = resolveConfigPath({ path: ctx.configPath, env: ctx.env, home: ctx.home, cwd: ctx.cwd });
    const files = [path];
    const warn = (message: string): ProviderResult => ({
      items: [],
      warnings: [{ message: `${path}: ${message}`, path, provider: ID }],
      files,
      failedFiles: files,
    });
    const read = await readConfigFile(path, 'jsonc');
    if (read.kind === 'missing') {
      if (explicit) return { ...warn('config file not found'), failedFiles: [] };
      // No file is the defaults: a file that appears later and sets `port` asks for a restart.
      return { items: [], warnings: [], files, restartSettings: restartSettingsOf(path, DaemonSettingsSchema.parse({})) };
    }
    if (read.kind === 'error') return { items: [], warnings: [{ ...read.warning, provider: ID }], files, failedFiles: files };
    const doc = read.value ?? {};
    if (!isPlainObject(doc)) return warn('expected an object at the top level; ignored');

    await preparePolicyLanguage(doc);
    const checked = checkDaemonFile(doc, ctx.env, { predefined: predefinedVars(ctx.cwd, ctx.home) });
    if (!checked.settings) {
      return {
        files,
        failedFiles: files,
        items: [],
        warnings: checked.settingsIssues.map((issue) => ({
          message: `${path}: ${issueText(issue)} (file ignored)`,
          path,
          provider: ID,
        })),
      };
    }
    const source: ServerSource = { provider: ID, providerName: NAME, path, level: 'native' };
    const items = checked.servers.map((entry): DiscoveredItem => {
      const config = entry.config ?? looseConfig(entry.expanded);
      const errors = entry.issues.map((issue) => (issue.path ? issueText(issue) : issue.message));
      return { name: entry.name, config, source, errors: [...errors, ...unresolvedPlaceholders(config)] };
    });
    const { enableProjectConfig, disabledServers, enabledServers, policies } = checked.settings;
    return {
      items,
      warnings: [],
      files,
      settings: { enableProjectConfig, disabledServers, enabledServers, policies },
      restartSettings: restartSettingsOf(path, checked.settings),
    };
  },
};

/** Best-effort shape of an invalid entry, so `discover` can still show its transport. */
function looseConfig(expanded: unknown): ServerConfig {
  return isPlainObject(expanded) ? standardDialect(new EntryReader(expanded), {}) : {};
}
