import { expandEntryStrings, isPlainObject, type ExpandOptions, type VarSource } from './expand-vars.js';
import { fromZodIssues, mergeIssues, retiredKeyIssues, type ConfigIssue } from './issues.js';
import {
  DaemonSettingsSchema,
  ServerConfigSchema,
  type DaemonSettings,
  type NativeServerConfig,
} from './schema.js';

export interface CheckedServerEntry {
  name: string;
  /** `${VAR}`-expanded raw entry (what was validated). */
  expanded: unknown;
  /** Set when the entry is valid. */
  config?: NativeServerConfig;
  /** Paths relative to the entry. */
  issues: ConfigIssue[];
}

export interface CheckedDaemonFile {
  /** Problems outside `mcpServers.<name>`; `settings` is unset when there are any. */
  settingsIssues: ConfigIssue[];
  settings?: DaemonSettings;
  servers: CheckedServerEntry[];
}

/**
 * Validates a parsed daemon file in two layers, the settings and each server entry, so the
 * strict loader can report everything at once and discovery can keep the good entries.
 * Server strings are `${VAR}`-expanded before validation, so a `url` built from a variable
 * is checked as it will be used.
 */
export function checkDaemonFile(
  raw: Readonly<Record<string, unknown>>,
  vars: VarSource,
  expand: ExpandOptions = {},
): CheckedDaemonFile {
  const parsed = DaemonSettingsSchema.safeParse(raw);
  const settingsIssues = mergeIssues(retiredKeyIssues(raw), parsed.success ? [] : fromZodIssues(parsed.error.issues));

  const table = isPlainObject(raw.mcpServers) ? raw.mcpServers : {};
  const servers = Object.entries(table).map(([name, entry]): CheckedServerEntry => {
    if (!isPlainObject(entry)) {
      return { name, expanded: entry, issues: [{ path: '', message: 'expected an object' }] };
    }
    const expanded = expandEntryStrings(entry, vars, expand);
    const result = ServerConfigSchema.safeParse(expanded);
    const issues = mergeIssues(retiredKeyIssues(entry), result.success ? [] : fromZodIssues(result.error.issues));
    const checked: CheckedServerEntry = { name, expanded, issues };
    if (result.success && issues.length === 0) checked.config = result.data;
    return checked;
  });

  return parsed.success && settingsIssues.length === 0
    ? { settingsIssues, settings: parsed.data, servers }
    : { settingsIssues, servers };
}
