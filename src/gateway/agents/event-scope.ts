import type { StampedEvent } from '../../events/event-bus.js';
import type { ServerSnapshot } from '../../upstream/server-snapshot.js';
import type { AgentRef } from './agent-ref.js';
import type { AgentView, ViewedTool } from './agent-view.js';

/** What scoping reads of the catalogue: a tool's annotations, a server's tools. */
export interface ScopeTools {
  get(name: string): ViewedTool | undefined;
  itemsOf(server: string): readonly ViewedTool[];
}

/** The parts of the hello snapshot that depend on who reads it. */
export interface ScopedHello {
  servers: ServerSnapshot[];
  toolCount: number;
}

/**
 * What an agent's `/events` connection may carry of `event` (issue #22): the event as is, a copy
 * narrowed to its view, or undefined (not sent).
 *
 * - About one server (`server.status`, `*.changed`, `server.log`, a one-server reload): only
 *   servers in scope; tool names and counts narrowed to the view.
 * - Operator-only: `approval.*`, `tools.held` (it names the approve command), `agent.changed`,
 *   `pins.changed`, `oauth.signed_in`, `oauth.signed_out`, and the `call.finished` of anyone but the agent itself.
 * - Daemon-wide: a full reload is sent without its error (which may name files or servers);
 *   `config.changed` keeps only the servers in scope and no file paths, and is dropped when
 *   none is left. A kind this function does not know is not sent (fail closed).
 */
export function scopeEvent(event: StampedEvent, agent: AgentRef, tools: ScopeTools): StampedEvent | undefined {
  const view = agent.view;
  const inScope = (server: string): boolean => view === undefined || view.allowsServer(server);
  switch (event.type) {
    case 'server.status':
      if (!inScope(event.server)) return undefined;
      return view ? { ...event, toolCount: countInView(view, tools, event.server) } : event;
    case 'tools.changed': {
      if (!inScope(event.server)) return undefined;
      if (!view) return event;
      const added = event.added.filter((name) => view.allowsTool(tools.get(name) ?? { name, server: event.server }));
      // A removed tool's annotations are gone with it: judged by name and server, an access tier fails closed.
      const removed = event.removed.filter((name) => view.allowsTool({ name, server: event.server }));
      if (added.length + removed.length === 0 && event.added.length + event.removed.length > 0) return undefined;
      return { ...event, added, removed, toolCount: countInView(view, tools, event.server) };
    }
    case 'prompts.changed':
    case 'resources.changed':
    case 'server.log':
      return inScope(event.server) ? event : undefined;
    case 'reload.started':
      return event.server === null || inScope(event.server) ? event : undefined;
    case 'reload.finished': {
      if (event.server !== null) return inScope(event.server) ? event : undefined;
      if (event.error === undefined) return event;
      const { error: _hidden, ...rest } = event;
      return rest;
    }
    case 'config.changed': {
      const added = event.added.filter(inScope);
      const removed = event.removed.filter(inScope);
      const changed = event.changed.filter(inScope);
      const kept = event.kept.filter(inScope);
      if (added.length + removed.length + changed.length + kept.length === 0) return undefined;
      return { ...event, files: [], added, removed, changed, kept };
    }
    case 'call.finished':
      return event.agent === agent.name ? event : undefined;
    case 'approval.requested':
    case 'approval.resolved':
    case 'tools.held':
    case 'agent.changed':
    case 'pins.changed':
    case 'oauth.signed_in':
    case 'oauth.signed_out':
      return undefined;
    default:
      return undefined;
  }
}

/** The hello snapshot's servers and tool count as `agent` may see them. */
export function scopeHello(hello: ScopedHello, agent: AgentRef, tools: ScopeTools): ScopedHello {
  const view = agent.view;
  if (!view) return hello;
  const servers = hello.servers.filter((server) => view.allowsServer(server.name)).map((server) => ({ ...server, toolCount: countInView(view, tools, server.name) }));
  return { servers, toolCount: servers.reduce((sum, server) => sum + server.toolCount, 0) };
}

function countInView(view: AgentView, tools: ScopeTools, server: string): number {
  let count = 0;
  for (const tool of tools.itemsOf(server)) if (view.allowsTool(tool)) count++;
  return count;
}
