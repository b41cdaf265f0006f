import type { MCPManager } from '../../upstream/manager.js';
import { globMatcher } from '../../util/glob-matcher.js';
import type { AgentView } from '../agents/agent-view.js';

export type TaskSupport = 'optional' | 'required';

/**
 * Whether a tool, by the name an agent calls it, runs as a task (issue #41): its server's `tasks`
 * globs name it (over the server's own tool names), or the server itself lists it with
 * `execution.taskSupport: "optional"` (a 2025-11-25 server that declares task tools; the call still
 * reaches it as a plain call, which such a tool accepts, and the task is the gateway's). The
 * operator's setting wins. Undefined for a plain tool, and for a name outside the caller's view or
 * unknown — the call then takes the plain path and its usual answer.
 */
export function taskSupportOf(manager: Pick<MCPManager, 'catalogues' | 'upstream'>, name: string, view: AgentView | undefined): TaskSupport | undefined {
  const tool = manager.catalogues.tools.get(name);
  if (!tool || (view && !view.allowsTool(tool))) return undefined;
  const settings = manager.upstream(tool.server)?.config.tasks;
  if (settings && globMatcher(settings.tools)(tool.originalName)) return settings.mode ?? 'optional';
  return tool.execution?.taskSupport === 'optional' ? 'optional' : undefined;
}
