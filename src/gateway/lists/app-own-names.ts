import type { AgentView } from '../agents/agent-view.js';
import { pointsAtView } from '../../upstream/catalogue/app-uris.js';
import type { ToolSource } from './tool-not-found.js';

/**
 * An MCP App's own tool calls (issue #41): a view's script calls its server's tools through the
 * host by the server's own names, which Switchboard shows prefixed (`show_chart` is
 * `mcp_charts_show_chart`). A name no tool has is taken as such a call when exactly one tool in
 * the caller's view has it as its own name and that tool's server serves apps (one of its tools
 * points at a `ui://` view). The call then goes on under that tool's exposed name, so everything on
 * the path — the view, policies, approvals, the audit — sees the tool as the catalogue names it.
 * Two app servers in the view with the same own name: not resolved (nobody can tell whose view
 * called), and the caller gets the unknown-tool answer with both names suggested. Undefined when
 * nothing resolves; only a miss costs the scan.
 */
export function appOwnToolName(name: string, tools: ToolSource, view: AgentView | undefined): string | undefined {
  const all = tools.list();
  const candidates = all.filter((tool) => tool.originalName === name && tool.name !== name && (!view || view.allowsTool(tool)));
  if (candidates.length === 0) return undefined;
  const appServers = new Set(all.filter((tool) => pointsAtView(tool._meta)).map((tool) => tool.server));
  const apps = candidates.filter((tool) => appServers.has(tool.server));
  return apps.length === 1 ? apps[0]?.name : undefined;
}
