import { AGENT_NAME, AgentConfigSchema, type AgentConfig } from './agent-schema.js';
import { expandEntryStrings, expandVars, hasPlaceholder, isPlainObject, type ExpandOptions, type VarSource } from './expand-vars.js';
import { fromZodIssues, mergeIssues, retiredKeyIssues, type ConfigIssue } from './issues.js';
import { DaemonSettingsSchema, type DaemonSettings } from './schema.js';
import { RETIRED_SERVER_KEYS, ServerConfigSchema, type NativeServerConfig } from './server-schema.js';

export interface CheckedServerEntry {
  name: string;
  /** `${VAR}`-expanded raw entry (what was validated). */
  expanded: unknown;
  /** Set when the entry is valid. */
  config?: NativeServerConfig;
  /** Paths relative to the entry. */
  issues: ConfigIssue[];
}

/** One entry of `agents`: valid (`config`) or not (`issues`, paths relative to the entry). */
export interface CheckedAgentEntry {
  name: string;
  config?: AgentConfig;
  issues: ConfigIssue[];
}

export interface CheckedDaemonFile {
  /** Problems outside `mcpServers.<name>`; `settings` is unset when there are any. */
  settingsIssues: ConfigIssue[];
  settings?: DaemonSettings;
  servers: CheckedServerEntry[];
  agents: CheckedAgentEntry[];
}

/**
 * Validates a parsed daemon file in two layers, the settings and each server entry, so the
 * strict loader can report everything at once and discovery can keep the good entries.
 * Server strings are `${VAR}`-expanded before validation, so a `url` built from a variable
 * is checked as it will be used.
 */
export function checkDaemonFile(raw: Readonly<Record<string, unknown>>, vars: VarSource, expand: ExpandOptions = {}): CheckedDaemonFile {
  const parsed = DaemonSettingsSchema.safeParse(raw);
  const settingsIssues = mergeIssues(retiredKeyIssues(raw), parsed.success ? [] : fromZodIssues(parsed.error.issues));

  const table = isPlainObject(raw.mcpServers) ? raw.mcpServers : {};
  const servers = Object.entries(table).map(([name, entry]): CheckedServerEntry => {
    if (!isPlainObject(entry)) {
      return { name, expanded: entry, issues: [{ path: '', message: 'expected an object' }] };
    }
    const expanded = expandEntryStrings(entry, vars, expand);
    const result = ServerConfigSchema.safeParse(expanded);
    const issues = mergeIssues(retiredKeyIssues(entry, RETIRED_SERVER_KEYS), result.success ? [] : fromZodIssues(result.error.issues));
    const checked: CheckedServerEntry = { name, expanded, issues };
    if (result.success && issues.length === 0) checked.config = result.data;
    return checked;
  });

  const agents = Object.entries(isPlainObject(raw.agents) ? raw.agents : {}).map(([name, entry]) => checkAgentEntry(name, entry, vars, expand));
  return parsed.success && settingsIssues.length === 0 ? { settingsIssues, settings: parsed.data, servers, agents } : { settingsIssues, servers, agents };
}

/**
 * One agent entry. Its `key` is `${VAR}`-expanded here (a `!cmd` key is run by the registry); a
 * placeholder left unexpanded would make a guessable key, so it makes the entry invalid.
 */
function checkAgentEntry(name: string, entry: unknown, vars: VarSource, expand: ExpandOptions): CheckedAgentEntry {
  const issues: ConfigIssue[] = [];
  if (!AGENT_NAME.test(name)) issues.push({ path: '', message: 'an agent name is 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
  if (!isPlainObject(entry)) return { name, issues: [...issues, { path: '', message: 'expected an object' }] };
  const expanded = typeof entry.key === 'string' ? { ...entry, key: expandVars(entry.key, vars, expand) } : entry;
  if (typeof expanded.key === 'string' && hasPlaceholder(expanded.key)) issues.push({ path: 'key', message: 'unresolved placeholder (is the variable set?)' });
  const result = AgentConfigSchema.safeParse(expanded);
  if (!result.success) issues.push(...fromZodIssues(result.error.issues));
  return issues.length === 0 && result.success ? { name, config: result.data, issues } : { name, issues };
}
