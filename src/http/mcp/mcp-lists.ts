import type { Prompt, Tool } from '@modelcontextprotocol/server';
import { ORIGIN_META_KEY, originOf } from '../../mcp/upstream/instance.js';
import type { MCPManager } from '../../mcp/manager.js';
import { toMcpPrompt, type BridgedPrompt } from '../../mcp/catalogue/prompt-bridge.js';
import { toMcpTool } from '../../mcp/catalogue/tool-bridge.js';

/** What the lists need of the manager. */
export type ListSource = Pick<MCPManager, 'getCatalogue' | 'getPrompts' | 'identity'>;

/**
 * The MCP views of the catalogues, rebuilt only when a catalogue's version moves, so every session
 * shares one array and a list request costs nothing per request.
 */
export class McpLists {
  private toolsVersion = -1;
  private toolList: Tool[] = [];
  private promptsVersion = -1;
  private promptList: Prompt[] = [];

  constructor(private readonly manager: ListSource) {}

  tools(): Tool[] {
    const catalogue = this.manager.getCatalogue();
    if (catalogue.version !== this.toolsVersion) {
      const selfId = this.manager.identity.id;
      this.toolList = catalogue.list().map((tool) => withOrigin(toMcpTool(tool), selfId));
      this.toolsVersion = catalogue.version;
    }
    return this.toolList;
  }

  prompts(): Prompt[] {
    const catalogue = this.manager.getPrompts();
    if (catalogue.version !== this.promptsVersion) {
      this.promptList = catalogue.list().map((prompt: BridgedPrompt) => toMcpPrompt(prompt));
      this.promptsVersion = catalogue.version;
    }
    return this.promptList;
  }
}

/** The tool as served: the instances it passed through, this one first (see mcp/instance.ts). */
function withOrigin(tool: Tool, selfId: string): Tool {
  return { ...tool, _meta: { ...tool._meta, [ORIGIN_META_KEY]: [selfId, ...originOf(tool)] } };
}
