import { createHash } from 'node:crypto';
import type { Prompt, Resource, ResourceTemplateType as ResourceTemplate, Tool } from '@modelcontextprotocol/server';
import type { AgentView } from '../agents/agent-view.js';
import { ORIGIN_META_KEY, originOf } from '../../upstream/instance.js';
import type { MCPManager } from '../../upstream/manager.js';
import { toMcpPrompt, type BridgedPrompt } from '../../upstream/catalogue/prompt-bridge.js';
import { toMcpTool } from '../../upstream/catalogue/tool-bridge.js';

/** What the lists need of the manager. */
export type ListSource = Pick<MCPManager, 'getCatalogue' | 'getPrompts' | 'getResources' | 'identity'>;

export type ListKind = 'tools' | 'prompts' | 'resources';

interface ResourceLists {
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
}

/** One view's list of one kind, as of a catalogue version. */
interface ViewEntry<T> {
  version: number;
  list: T;
  /** A digest of `list`, made when first asked for (list_changed decisions). */
  digest?: string;
}

/**
 * The MCP views of the catalogues, rebuilt only when a catalogue's version moves, so every session
 * shares one array and a list request costs nothing per request. An agent's view (issue #22) is
 * cached the same way, per catalogue version × view key: agents with equal scopes share it.
 */
export class McpLists {
  private toolsVersion = -1;
  private toolList: Tool[] = [];
  private promptsVersion = -1;
  private promptList: Prompt[] = [];
  private readonly views: { [K in ListKind]: Map<string, ViewEntry<unknown>> } = { tools: new Map(), prompts: new Map(), resources: new Map() };

  constructor(private readonly manager: ListSource) {}

  tools(view?: AgentView): Tool[] {
    const catalogue = this.manager.getCatalogue();
    if (catalogue.version !== this.toolsVersion) {
      const selfId = this.manager.identity.id;
      this.toolList = catalogue.list().map((tool) => withOrigin(toMcpTool(tool), selfId));
      this.toolsVersion = catalogue.version;
    }
    if (!view) return this.toolList;
    return this.entry('tools', view, catalogue.version, () => {
      const bridged = catalogue.list();
      return this.toolList.filter((_, i) => view.allowsTool(bridged[i] as (typeof bridged)[number]));
    }).list;
  }

  prompts(view?: AgentView): Prompt[] {
    const catalogue = this.manager.getPrompts();
    if (catalogue.version !== this.promptsVersion) {
      this.promptList = catalogue.list().map((prompt: BridgedPrompt) => toMcpPrompt(prompt));
      this.promptsVersion = catalogue.version;
    }
    if (!view) return this.promptList;
    return this.entry('prompts', view, catalogue.version, () => {
      const bridged = catalogue.list();
      return this.promptList.filter((_, i) => view.allowsServer((bridged[i] as BridgedPrompt).server));
    }).list;
  }

  /** Resources and templates; in a view, those of its servers (each goes where a read of it would). */
  resources(view?: AgentView): ResourceLists {
    const catalogue = this.manager.getResources();
    if (!view) return { resources: [...catalogue.list()], resourceTemplates: [...catalogue.listTemplates()] };
    return this.entry('resources', view, catalogue.version, () => ({
      resources: catalogue.list().filter((resource) => inView(view, catalogue.route(resource.uri))),
      resourceTemplates: catalogue.listTemplates().filter((template) => inView(view, catalogue.templateServer(template.uriTemplate))),
    })).list;
  }

  /** A digest of what `view` sees of `kind` now: equal digests, equal lists. */
  digest(kind: ListKind, view: AgentView): string {
    if (kind === 'tools') this.tools(view);
    else if (kind === 'prompts') this.prompts(view);
    else this.resources(view);
    const entry = this.views[kind].get(view.key) as ViewEntry<unknown>;
    entry.digest ??= createHash('sha256').update(JSON.stringify(entry.list)).digest('base64url');
    return entry.digest;
  }

  private entry<T>(kind: ListKind, view: AgentView, version: number, build: () => T): ViewEntry<T> {
    const entries = this.views[kind];
    let entry = entries.get(view.key) as ViewEntry<T> | undefined;
    if (entry?.version !== version) {
      entry = { version, list: build() };
      entries.set(view.key, entry);
    }
    return entry;
  }
}

function inView(view: AgentView, server: string | undefined): boolean {
  return server !== undefined && view.allowsServer(server);
}

/** The tool as served: the instances it passed through, this one first (see mcp/instance.ts). */
function withOrigin(tool: Tool, selfId: string): Tool {
  return { ...tool, _meta: { ...tool._meta, [ORIGIN_META_KEY]: [selfId, ...originOf(tool)] } };
}
