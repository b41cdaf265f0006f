import { createHash } from 'node:crypto';
import type { ServerConfig } from './types.js';

/**
 * The cache key's config half (SPEC §5): SHA-256 hex of the *unresolved* config, so a changed
 * `!command` output or a rotated token doesn't throw the cache away, while any edit to the
 * file does. Keys are sorted at every depth, so re-ordering a file never changes the hash, and
 * `undefined` fields are dropped, as JSON would.
 */
export function configHash(config: ServerConfig): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex');
}

/**
 * JSON with object keys in code-unit order. Built as a string rather than as a re-keyed object
 * because JS objects always list integer-like keys first, whatever order they were added in.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members: string[] = [];
    for (const key of Object.keys(record).sort()) {
      if (record[key] === undefined) continue;
      members.push(`${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    }
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
