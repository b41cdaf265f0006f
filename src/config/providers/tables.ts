import type { SourceLevel } from '../types.js';
import type { ServerTable } from './file-provider.js';

/** The usual shape: one top-level table (`mcpServers`, `servers`, …) at one level. */
export function topLevelTable(key: string, level: SourceLevel): (doc: Record<string, unknown>) => ServerTable[] {
  return (doc) => [{ level, name: key, table: doc[key] }];
}
