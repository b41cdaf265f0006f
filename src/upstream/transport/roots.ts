import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Root } from '@modelcontextprotocol/client';

/**
 * Roots (the folders a server is told it may work in) belong to whoever owns them (issue #36
 * item 1): a server entry's own `roots`, or the agent whose call is in progress — never the
 * daemon's working directory, which a server such as the filesystem one would take in place of the
 * folder its own command line names. With both, the agent's roots are confined to the entry's.
 */

/** Root paths (or file:// URIs) → the roots/list answer. */
export function toRoots(paths: readonly string[]): Root[] {
  return paths.map((path) => {
    if (path.startsWith('file://')) return { uri: path };
    const absolute = resolve(path);
    return { uri: pathToFileURL(absolute).href, name: basename(absolute) || absolute };
  });
}

/**
 * The part of the agent's roots inside the entry's: an agent root inside an entry root stays, an
 * entry root inside an agent root stays (the agent asked for more than the entry allows: it gets
 * what the entry allows of it), anything else is dropped. No entry roots: the agent's, unchanged.
 */
export function confineRoots(agentRoots: readonly Root[], entryRoots: readonly Root[]): Root[] {
  if (entryRoots.length === 0) return [...agentRoots];
  // Keyed by folder, not by spelling: `file:///srv/docs` and `file:///srv/docs/` are one root.
  const kept = new Map<string, Root>();
  const keep = (url: URL, root: Root): void => void (kept.has(folderOf(url)) || kept.set(folderOf(url), root));
  for (const agentRoot of agentRoots) {
    const agent = parse(agentRoot.uri);
    if (!agent) continue;
    if (entryRoots.some((entryRoot) => within(agent, parse(entryRoot.uri)))) {
      keep(agent, agentRoot);
      continue;
    }
    for (const entryRoot of entryRoots) {
      const entry = parse(entryRoot.uri);
      if (entry && within(entry, agent)) keep(entry, entryRoot);
    }
  }
  return [...kept.values()];
}

/**
 * A roots/list answer confined to the entry's roots (see confineRoots); any other answer as it is.
 * Also recognises the answer among a 2026-07-28 agent's `inputResponses` by its shape.
 */
export function confineRootsAnswer<T>(answer: T, entryRoots: readonly Root[]): T {
  if (entryRoots.length === 0 || !isRootsAnswer(answer)) return answer;
  return { ...answer, roots: confineRoots(answer.roots, entryRoots) };
}

function isRootsAnswer(value: unknown): value is { roots: Root[] } {
  if (typeof value !== 'object' || value === null) return false;
  const roots = (value as { roots?: unknown }).roots;
  return Array.isArray(roots) && roots.every((root) => typeof (root as { uri?: unknown } | null)?.uri === 'string');
}

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

function folderOf(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** Whether `inner` is `outer` or below it (same scheme and host, a path prefix at a `/`). */
function within(inner: URL | undefined, outer: URL | undefined): boolean {
  if (!inner || !outer) return false;
  const path = folderOf(inner);
  const bound = folderOf(outer);
  return path === bound || path.startsWith(`${bound}/`);
}
