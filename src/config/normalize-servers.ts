import type { Dialect } from './dialects.js';
import { EntryReader } from './entry-reader.js';
import { expandEntryStrings, isPlainObject, type ExpandOptions, type VarSource } from './expand-vars.js';
import { unresolvedPlaceholders } from './placeholders.js';
import type { DiscoveredItem } from './providers/provider.js';
import type { DiscoveryWarning, ServerSource } from './types.js';

export interface NormalizeOptions {
  source: ServerSource;
  dialect: Dialect;
  vars: VarSource;
  /** Editor variables and the client's own expansion rules. */
  expand?: ExpandOptions;
  /** How the table is named in the file, for warnings ("mcpServers", "servers", …). */
  tableName: string;
}

/**
 * Turns one table of server entries from another tool's file into discovered items. An entry
 * with bad field types is still returned (with its errors) so discovery can report it;
 * unknown keys are only warned about, because other tools add fields we have no use for.
 */
export function normalizeServers(table: unknown, opts: NormalizeOptions): { items: DiscoveredItem[]; warnings: DiscoveryWarning[] } {
  const items: DiscoveredItem[] = [];
  const warnings: DiscoveryWarning[] = [];
  const { source } = opts;
  if (table === undefined || table === null) return { items, warnings };
  if (!isPlainObject(table)) {
    warnings.push(warn(source, `"${opts.tableName}" is not an object; ignored`));
    return { items, warnings };
  }
  for (const [name, raw] of Object.entries(table)) {
    if (!isPlainObject(raw)) {
      items.push({ name, config: {}, source, errors: ['entry is not an object'] });
      continue;
    }
    const reader = new EntryReader(raw);
    const mapped = opts.dialect(reader, opts.vars);
    for (const key of reader.unknownKeys()) {
      warnings.push(warn(source, `server "${name}": unknown key "${key}" ignored`, name));
    }
    const config = expandEntryStrings(mapped, opts.vars, opts.expand);
    items.push({ name, config, source, errors: [...reader.errors, ...unresolvedPlaceholders(config)] });
  }
  return { items, warnings };
}

function warn(source: ServerSource, message: string, server?: string): DiscoveryWarning {
  return {
    message: `${source.path}: ${message}`,
    path: source.path,
    provider: source.provider,
    ...(server === undefined ? {} : { server }),
  };
}
