import { isSwitchboardError, SwitchboardError } from '../../errors.js';
import type { AgentView } from '../agents/agent-view.js';
import type { BridgedTool } from '../../upstream/catalogue/tool-bridge.js';
import { nearestNames } from '../../util/nearest-names.js';

/** What the suggestions are drawn from: the catalogue's tools. */
export interface ToolSource {
  list(): readonly BridgedTool[];
}

/**
 * `TOOL_NOT_FOUND` for `name` with the nearest names the caller can see as `suggestions`
 * (`call echo` → `mcp_everything_echo`). Only tools inside the caller's view are candidates:
 * a suggestion must not reveal a tool the unknown-tool answer hides (SPEC §12).
 */
export function toolNotFound(name: string, tools: ToolSource, view: AgentView | undefined, message = `No tool named "${name}"`): SwitchboardError {
  return new SwitchboardError('TOOL_NOT_FOUND', message, { suggestions: suggestTools(name, tools, view) });
}

/** `err` itself, or — when it is a `TOOL_NOT_FOUND` without suggestions — the same answer with them. */
export function withToolSuggestions(err: unknown, name: string, tools: ToolSource, view: AgentView | undefined): unknown {
  if (!isSwitchboardError(err, 'TOOL_NOT_FOUND') || err.suggestions !== undefined) return err;
  return toolNotFound(name, tools, view, err.message);
}

function suggestTools(name: string, tools: ToolSource, view: AgentView | undefined): string[] {
  const visible = view && !view.everything ? tools.list().filter((tool) => view.allowsTool(tool)) : tools.list();
  return nearestNames(
    name,
    visible.map((tool) => ({ name: tool.name, shortName: tool.originalName })),
  );
}
