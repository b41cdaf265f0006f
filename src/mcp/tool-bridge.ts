import { createHash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { ErrorInfo } from '../errors.js';

/**
 * Pure functions from upstream tools to the tools Switchboard exposes (SPEC §7): the name
 * mapping, collision handling and the aggregated, sorted list. No I/O, no state.
 */

/** Longest exposed name; many MCP clients and model APIs reject longer tool names. */
export const MAX_TOOL_NAME_LENGTH = 64;
const HASH_LENGTH = 8;
/** Room left for the readable part when `_<hash>` is appended. */
const PREFIX_LENGTH = MAX_TOOL_NAME_LENGTH - HASH_LENGTH - 1;

export interface BridgedTool {
  /** Exposed name, unique in the catalogue, matching `^[A-Za-z0-9_-]{1,64}$`. */
  name: string;
  server: string;
  /** The name to call on the server. */
  originalName: string;
  /** `mcp:<server> via <providerName>` */
  path: string;
  /** The tool's `title`, else `annotations.title` (MCP's order for display names). */
  title?: string;
  /** @default "MCP tool from <server>" */
  description: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
  /** The server's own `_meta` for the tool, passed through. */
  _meta?: Tool['_meta'];
  /** Served from the cache; calling it first waits for the server to connect. */
  deferred: boolean;
  /** Last known tools of a server that went away; present only when true. */
  stale?: boolean;
}

export interface ToolNameCollision {
  /** The exposed name every tool below mapped to. */
  name: string;
  /** Sorted by (server, originalName); the first kept `name`. */
  tools: Array<{ server: string; originalName: string; exposedName: string }>;
}

export interface CatalogueEntry {
  server: string;
  providerName: string;
  tools: readonly Tool[];
  deferred: boolean;
  stale?: boolean;
}

/**
 * `mcp_<server>_<tool>` with every run of characters outside `[A-Za-z0-9-]` (underscores
 * included) turned into one `_`. Over 64 characters it is cut and ends in `_<hash>`, the hash
 * taken over the unsanitised pair, so names that share a long prefix stay apart.
 */
export function exposedToolName(server: string, tool: string): string {
  const base = `mcp_${server}_${tool}`.replace(/[^A-Za-z0-9-]+/g, '_');
  return base.length <= MAX_TOOL_NAME_LENGTH ? base : withHash(base, shortHash(server, tool));
}

/**
 * The aggregated list, sorted by name. Names that collide go, in (server, originalName) order,
 * first to the plain name, then to `<prefix>_<hash>` — so the outcome depends only on the set
 * of tools, never on the order servers answered in. Linear apart from the sorts; hashes are
 * computed only for long names and collisions.
 */
export function buildCatalogue(entries: ReadonlyArray<CatalogueEntry>): {
  tools: BridgedTool[];
  collisions: ToolNameCollision[];
} {
  const byName = new Map<string, Candidate[]>();
  for (const entry of entries) {
    for (const tool of entry.tools) {
      const candidate: Candidate = { entry, tool, name: exposedToolName(entry.server, tool.name), dropped: false };
      const group = byName.get(candidate.name);
      if (group) group.push(candidate);
      else byName.set(candidate.name, [candidate]);
    }
  }

  const shared: Array<[string, Candidate[]]> = [];
  for (const pair of byName) if (pair[1].length > 1) shared.push(pair);
  shared.sort(([a], [b]) => compare(a, b));
  const collisions: ToolNameCollision[] = [];
  let used: Set<string> | undefined;
  for (const [name, group] of shared) {
    // Stable sort: a pair listed twice keeps its first definition (MCP wants names unique per
    // server, so this only tidies up after a misbehaving one).
    group.sort((a, b) => compare(a.entry.server, b.entry.server) || compare(a.tool.name, b.tool.name));
    const distinct = group.filter((c, i) => {
      const previous = group[i - 1];
      c.dropped = previous !== undefined && previous.entry.server === c.entry.server && previous.tool.name === c.tool.name;
      return !c.dropped;
    });
    if (distinct.length === 1) continue;
    used ??= new Set(byName.keys());
    for (const loser of distinct.slice(1)) {
      loser.name = uniqueHashedName(name, loser.entry.server, loser.tool.name, used);
      used.add(loser.name);
    }
    collisions.push({
      name,
      tools: distinct.map((c) => ({ server: c.entry.server, originalName: c.tool.name, exposedName: c.name })),
    });
  }

  const tools: BridgedTool[] = [];
  for (const group of byName.values()) {
    for (const candidate of group) if (!candidate.dropped) tools.push(bridge(candidate));
  }
  tools.sort((a, b) => compare(a.name, b.name));
  return { tools, collisions };
}

/** `_meta` key of an error result: the stable code of the failure (SPEC §7). */
export const ERROR_META_KEY = 'switchboard/error';

/**
 * A transport or protocol failure as a tool result the caller's model can read (SPEC §7), with
 * the stable code in `_meta` for programs that branch on it.
 */
export function toolErrorResult(error: ErrorInfo): CallToolResult {
  return {
    content: [{ type: 'text', text: `MCP error: ${error.message}` }],
    isError: true,
    _meta: { [ERROR_META_KEY]: { code: error.code } },
  };
}

interface Candidate {
  entry: CatalogueEntry;
  tool: Tool;
  name: string;
  /** A repeat of an earlier (server, tool) pair. */
  dropped: boolean;
}

function bridge({ entry, tool, name }: Candidate): BridgedTool {
  const bridged: BridgedTool = {
    name,
    server: entry.server,
    originalName: tool.name,
    path: `mcp:${entry.server} via ${entry.providerName}`,
    description: tool.description || `MCP tool from ${entry.server}`,
    inputSchema: tool.inputSchema,
    deferred: entry.deferred,
  };
  const title = tool.title ?? tool.annotations?.title;
  if (title !== undefined) bridged.title = title;
  if (tool.outputSchema !== undefined) bridged.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) bridged.annotations = tool.annotations;
  if (tool._meta !== undefined) bridged._meta = tool._meta;
  if (entry.stale) bridged.stale = true;
  return bridged;
}

/**
 * `<base cut short>_<hash of the pair>`. Another tool may (against all odds) already hold that
 * name — a 32-bit hash clash, or a tool literally named like it — so the hash input is salted
 * with a counter until the name is free. Groups and their members are visited in sorted
 * order, so `used` grows the same way, and the outcome is the same, whatever the input order.
 */
function uniqueHashedName(base: string, server: string, tool: string, used: ReadonlySet<string>): string {
  let name = withHash(base, shortHash(server, tool));
  for (let salt = 1; used.has(name); salt += 1) name = withHash(base, shortHash(server, `${tool}\u0000${salt}`));
  return name;
}

function withHash(base: string, hash: string): string {
  // Dropping a trailing `_` keeps the "no `__`" property of sanitised names.
  return `${base.slice(0, PREFIX_LENGTH).replace(/_+$/, '')}_${hash}`;
}

function shortHash(server: string, tool: string): string {
  return createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, HASH_LENGTH);
}

/** Code-unit order: the same on every machine, unlike `localeCompare`. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
