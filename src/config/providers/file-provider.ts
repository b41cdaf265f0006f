import type { Dialect } from '../dialects.js';
import { isPlainObject, predefinedVars, type VarSource } from '../expand-vars.js';
import { normalizeServers } from '../normalize-servers.js';
import { readConfigFile, type ConfigFormat } from '../read-config-file.js';
import type { DiscoveryWarning, SourceLevel } from '../types.js';
import type { ConfigProvider, ProviderContext, ProviderResult } from './provider.js';

/** Where the server table sits in a parsed document, and at which level it applies. */
export interface ServerTable {
  level: SourceLevel;
  /** Name shown in warnings, e.g. `mcpServers` or `projects["/repo"].mcpServers`. */
  name: string;
  table: unknown;
}

export interface ServersFile {
  /** Absolute path. */
  path: string;
  format: ConfigFormat;
  dialect: Dialect;
  tables(doc: Record<string, unknown>): ServerTable[];
  /** Variables for `${…}` expansion. @default ctx.env */
  vars?: VarSource;
  /** The client expands `$VAR` without braces too (Gemini CLI). @default false */
  bareDollar?: boolean;
}

export interface FileProviderSpec {
  id: string;
  displayName: string;
  priority: number;
  files(ctx: ProviderContext): ServersFile[];
}

/**
 * A provider made of config files that hold one or more server tables. Files are read in
 * parallel; their items keep the order `files()` lists them in, which is the precedence
 * within the provider.
 */
export function createFileProvider(spec: FileProviderSpec): ConfigProvider {
  const { id, displayName, priority } = spec;
  return {
    id,
    displayName,
    priority,
    async read(ctx) {
      const files = spec.files(ctx);
      const results = await Promise.all(files.map((file) => readServersFile(spec, file, ctx)));
      return {
        items: results.flatMap((r) => r.items),
        warnings: results.flatMap((r) => r.warnings),
        files: files.map((file) => file.path),
        failedFiles: results.flatMap((r) => r.failedFiles ?? []),
      };
    },
  };
}

async function readServersFile(spec: FileProviderSpec, file: ServersFile, ctx: ProviderContext): Promise<ProviderResult> {
  const read = await readConfigFile(file.path, file.format);
  if (read.kind === 'missing') return { items: [], warnings: [] };
  if (read.kind === 'error') return { items: [], warnings: [{ ...read.warning, provider: spec.id }], failedFiles: [file.path] };
  if (read.value === undefined) return { items: [], warnings: [] };
  if (!isPlainObject(read.value)) {
    const warning: DiscoveryWarning = {
      message: `${file.path}: expected an object at the top level; ignored`,
      path: file.path,
      provider: spec.id,
    };
    return { items: [], warnings: [warning], failedFiles: [file.path] };
  }
  const result: ProviderResult = { items: [], warnings: [] };
  for (const { level, name, table } of file.tables(read.value)) {
    const source = { provider: spec.id, providerName: spec.displayName, path: file.path, level };
    const { items, warnings } = normalizeServers(table, {
      source,
      dialect: file.dialect,
      vars: file.vars ?? ctx.env,
      expand: { predefined: predefinedVars(ctx.cwd, ctx.home), bareDollar: file.bareDollar ?? false },
      tableName: name,
    });
    result.items.push(...items);
    result.warnings.push(...warnings);
  }
  return result;
}
