import type { Tool } from '@modelcontextprotocol/client';
import { buildCatalogue, type BridgedTool, type ToolNameCollision } from './tool-bridge.js';

export interface NameDiff {
  added: string[];
  removed: string[];
}

interface ServerEntry {
  server: string;
  providerName: string;
  tools: Tool[];
  deferred: boolean;
  stale: boolean;
}

/**
 * The aggregated tool list of every server, rebuilt when one server's tools change. Names are
 * resolved across all servers at once so collisions come out the same whatever the order of
 * arrival. `version` increments on every change; HTTP caches (ETag, serialised bodies) key on it.
 */
export class ToolCatalogue {
  private readonly entries = new Map<string, ServerEntry>();
  private tools: BridgedTool[] = [];
  private byName = new Map<string, BridgedTool>();
  private byServer = new Map<string, string[]>();
  private collisionList: ToolNameCollision[] = [];
  private currentVersion = 0;

  get version(): number {
    return this.currentVersion;
  }

  list(): readonly BridgedTool[] {
    return this.tools;
  }

  get(name: string): BridgedTool | undefined {
    return this.byName.get(name);
  }

  collisions(): readonly ToolNameCollision[] {
    return this.collisionList;
  }

  hasServer(server: string): boolean {
    return this.entries.has(server);
  }

  namesOf(server: string): string[] {
    return this.byServer.get(server) ?? [];
  }

  /**
   * Replaces one server's tools (an empty list removes it) and returns the exposed-name diff of
   * every server whose names changed — always including `server` itself. Another server can be
   * affected: a new tool may take a name whose collision renames that server's tool.
   */
  setServer(
    server: string,
    providerName: string,
    tools: Tool[],
    flags: { deferred: boolean; stale: boolean },
  ): Map<string, NameDiff> {
    const before = this.byName;
    if (tools.length === 0) this.entries.delete(server);
    else this.entries.set(server, { server, providerName, tools, ...flags });
    this.rebuild();
    return diffByServer(before, this.byName, server);
  }

  clear(): void {
    this.entries.clear();
    this.rebuild();
  }

  private rebuild(): void {
    const { tools, collisions } = buildCatalogue([...this.entries.values()]);
    this.tools = tools;
    this.collisionList = collisions;
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
    this.byServer = new Map();
    for (const tool of tools) {
      const names = this.byServer.get(tool.server);
      if (names) names.push(tool.name);
      else this.byServer.set(tool.server, [tool.name]);
    }
    this.currentVersion += 1;
  }
}

function sameTool(a: BridgedTool | undefined, b: BridgedTool): boolean {
  return a !== undefined && a.server === b.server && a.originalName === b.originalName;
}

/** Names that appeared or went away between two catalogues, grouped by the owning server. */
function diffByServer(
  before: ReadonlyMap<string, BridgedTool>,
  after: ReadonlyMap<string, BridgedTool>,
  always: string,
): Map<string, NameDiff> {
  const diffs = new Map<string, NameDiff>([[always, { added: [], removed: [] }]]);
  const diffOf = (server: string): NameDiff => {
    let diff = diffs.get(server);
    if (!diff) diffs.set(server, (diff = { added: [], removed: [] }));
    return diff;
  };
  for (const [name, tool] of before) if (!sameTool(after.get(name), tool)) diffOf(tool.server).removed.push(name);
  for (const [name, tool] of after) if (!sameTool(before.get(name), tool)) diffOf(tool.server).added.push(name);
  for (const diff of diffs.values()) {
    diff.added.sort();
    diff.removed.sort();
  }
  return diffs;
}
