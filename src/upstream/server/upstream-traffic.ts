import { errorMessage } from '../../errors.js';
import type { CallerChannel } from '../transport/caller.js';
import type { ServerConnection } from '../transport/client.js';
import type { ListKind } from '../transport/connection.js';
import { noAgent, type AgentRequest } from '../transport/server-traffic.js';
import type { BackPressure } from './back-pressure.js';
import type { UpstreamHost, UpstreamIdentity } from './upstream-host.js';
import { Coalescer } from '../../util/coalescer.js';
import { exposeAppUri } from '../catalogue/app-uris.js';

/** The upstream as its traffic sees it. */
export interface TrafficOwner {
  identity: UpstreamIdentity;
  /** Whether the connection is still the upstream's live one. */
  isCurrent: () => boolean;
  /** The agents whose requests are in progress on the server. */
  callers: () => CallerChannel[];
  /** A log message the server sent, for the upstream's own ring. */
  logged: (params: Record<string, unknown>) => void;
  /** The pause the server asked for: a re-list waits it out (issue #35 item 3). */
  pause: BackPressure;
}

/**
 * What a live connection's server says on its own, routed (SPEC §7): prompt and resource list
 * changes re-list that kind (one re-list in flight plus one queued, like tools), resource
 * updates and log messages go to the host, and the server's questions go to the agent whose call
 * is in progress. Returns the functions that undo the wiring.
 */
export function routeServerTraffic(owner: TrafficOwner, connection: ServerConnection, host: UpstreamHost): Array<() => void> {
  const upstream = owner.identity;
  const current = owner.isCurrent;
  const relist = (kinds: readonly ListKind[]) =>
    new Coalescer(async () => {
      try {
        const lists = await owner.pause.after(() => host.listOthers(upstream, connection, undefined, kinds));
        if (current()) host.setOthers(upstream, lists, 'list_changed');
      } catch (err) {
        // Only a server that kept refusing for pauses gets here (any other failed list counts as
        // empty): the lists it had stay.
        host.log.warn({ server: upstream.name, kinds, err: errorMessage(err) }, 're-list after list_changed failed');
      }
    }, current);
  const prompts = relist(['prompts']);
  const resources = relist(['resources', 'resourceTemplates']);
  return [
    connection.onNotification('notifications/prompts/list_changed', () => prompts.request()),
    connection.onNotification('notifications/resources/list_changed', () => resources.request()),
    connection.onNotification('notifications/resources/updated', (params) => {
      // An MCP Apps view is known to agents by its exposed URI (app-uris.ts).
      if (typeof params.uri === 'string') host.resourceUpdated(upstream, exposeAppUri(upstream.name, params.uri));
    }),
    connection.onNotification('notifications/message', (params) => {
      owner.logged(params);
      host.logMessage(upstream, params, owner.callers());
    }),
    connection.routeAgentRequests((method, params, signal) => askAgent(owner.callers(), method, params, signal)),
  ];
}

/**
 * A request of the server that only an agent can answer goes to the agent whose call is in
 * progress on it. With no such call roots fall back to the configured ones (undefined) and the
 * rest is refused; with calls of several agents nobody can tell who was asked, so it is refused
 * too — a clear answer, never a wait.
 */
export async function askAgent(
  callers: readonly CallerChannel[],
  method: AgentRequest,
  params: Record<string, unknown> | undefined,
  signal: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  const able = [...callers].filter((caller) => caller.can(method));
  const agents = new Set(able.map((caller) => caller.agent));
  if (agents.size === 0) {
    if (method === 'roots/list') return undefined;
    throw noAgent(method, callers.length > 0 ? 'the agent of the call in progress did not declare that capability' : undefined);
  }
  if (agents.size > 1) throw noAgent(method, 'calls of several agents are in progress on this server, and it cannot be told which one asked');
  return (able.at(-1) as CallerChannel).request(method, params, signal);
}
