import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { buildCatalogue, type BridgedTool, type ToolNameCollision } from './tool-bridge.js';

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

  /** Replaces one server's tools (an empty list removes it) and returns its exposed-name diff. */
  setServer(
    server: string,
    providerName: string,
    tools: Tool[],
    flags: { deferred: boolean; stale: boolean },
  ): { added: string[]; removed: string[] } {
    const before = new Set(this.namesOf(server));
    if (tools.length === 0) this.entries.delete(server);
    else this.entries.set(server, { server, providerName, tools, ...flags });
    this.rebuild();
    const after = this.namesOf(server);
    const afterSet = new Set(after);
    return {
      added: after.filter((name) => !before.has(name)),
      removed: [...before].filter((name) => !afterSet.has(name)).sort(),
    };
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
