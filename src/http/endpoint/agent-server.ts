import { SUPPORTED_PROTOCOL_VERSIONS, type Server } from '@modelcontextprotocol/server';
import type { ServerCapabilities } from '@modelcontextprotocol/server';
import { INSTANCE_META_KEY } from '../../upstream/instance.js';
import type { AggregateCapabilities } from '../../upstream/manager.js';
import { UI_EXTENSION } from '../../upstream/transport/ui-extension.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { waitFor } from '../../util/wait-for.js';
import { PACKAGE_VERSION } from '../package-info.js';
import { callerOf } from './request-agent.js';
import type { AgentServerOptions } from './agent-server-options.js';
import { registerCatalogueHandlers } from './catalogue-handlers.js';
import { DESCRIBE_TOOLS, runMetaTool, SEARCH_TOOLS } from '../../gateway/index.js';
import { resultReader, scriptRunner, toolCaller } from './tool-call.js';
import { registerTaskHandlers, startTask } from './task-handlers.js';
import { LEGACY_TASKS_CAPABILITY, TASKS_EXTENSION } from '../../gateway/index.js';
import { startLegacyTask, withLegacyTaskSupport } from './legacy-task-handlers.js';
import { TaskServer } from './task-server.js';
import { MODERN_REVISION } from './modern-direct.js';

/**
 * How long a 2026-07-28 client may reuse the aggregated list when no upstream gave a hint. Short:
 * a client that does not listen for `tools/list_changed` still sees a change within seconds.
 */
export const DEFAULT_LIST_TTL_MS = 10_000;

export type { AgentServerOptions, AgentSource } from './agent-server-options.js';

/**
 * One low-level SDK `Server` per 2025-era session, or per 2026-07-28 request at a time (reused, see
 * modern-servers.ts) (SPEC §7, §9): the
 * aggregate of every connected server — tools, and as far as some server has them, prompts,
 * resources, completions and logging. It advertises exactly those capabilities.
 *
 * - `tools/list` serves the aggregated catalogue as is (no pagination, no re-validation), or in
 *   `search` mode the meta-tools and the pinned tools (catalogue-mode.ts, SPEC §13).
 * - `tools/call` is tool-call.ts's one path (the gateway, progress, questions, cancellation); in
 *   `search` mode a meta-tool's name goes to meta-tools.ts, whose `call_tool` takes that same path.
 */
export function createAgentServer(options: AgentServerOptions): Server {
  const { manager, runtime, lists, modes, session } = options;
  const available = manager.capabilities();
  const server = new TaskServer(
    { name: 'switchboard', version: PACKAGE_VERSION },
    {
      // A 2025-era session is offered the 2025-11-25 task surface too (legacy-task-handlers.ts).
      capabilities: { ...advertised(available), ...(session ? { tasks: LEGACY_TASKS_CAPABILITY } : {}) },
      // A 2026-07-28 request's server speaks the modern revision too: connecting it to a per-request
      // transport then binds that revision (the direct path, modern-direct.ts), as the SDK's entry does.
      ...(session ? {} : { supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, MODERN_REVISION] }),
      instructions: 'Tools, prompts and resources of every MCP server Switchboard is connected to; tools and prompts are named mcp_<server>_<name> unless a server says otherwise.',
    },
  );

  server.setRequestHandler('tools/list', async (request, ctx) => {
    // Before the startup gate the list would be partial; the gate is short (SPEC §1). Another
    // Switchboard (it says so in `_meta`) gets the partial list at once and the changes as
    // list_changed: if it waited, two daemons aggregating each other would deadlock at start.
    const fromSwitchboard = request.params?._meta?.[INSTANCE_META_KEY] !== undefined;
    if (runtime.state === 'starting' && !fromSwitchboard) await untilReadyOrAborted(runtime, ctx.mcpReq.signal);
    // The instance tree lets another Switchboard aggregating this one see a loop (SPEC §11).
    // It aggregates the catalogue itself, never the meta-tools of a search mode (SPEC §13).
    const caller = callerOf(ctx, session);
    const tools = fromSwitchboard ? lists.tools(caller?.view) : withLegacyTaskSupport(options, ctx, request.params, modes.tools(caller));
    await options.gateway.countDefinitions(caller, tools);
    const result = { tools, _meta: { [INSTANCE_META_KEY]: manager.instanceAd() } };
    // Caching hints exist only in the 2026-07-28 era, whose requests carry the `_meta` envelope.
    return ctx.mcpReq.envelope ? { ...result, ...manager.listHints(DEFAULT_LIST_TTL_MS) } : result;
  });

  // One call path for a direct call and for search mode's `call_tool` (tool-call.ts).
  const call = toolCaller(options);
  const read = resultReader(options);
  const run = scriptRunner(options);
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name, arguments: args } = request.params;
    const caller = callerOf(ctx, session);
    if (modes.isMetaCall(name, caller)) {
      const result = await runMetaTool(name, args, ctx, caller, { modes, call, read, run });
      // Definitions handed out count against a budget; call_tool and read_result were counted on the request path.
      if (name === SEARCH_TOOLS || name === DESCRIBE_TOOLS) await options.gateway.countDefinitions(caller, result);
      return result;
    }
    // A task-supporting tool, for a client that negotiated the tasks extension, answers a task at once (issue #41).
    const task = await startTask(options, ctx, request.params);
    if (task) return task as never;
    return call(name, args, ctx);
  });

  server.taskStarter = (request, ctx) => startLegacyTask(server, options, request, ctx);
  registerCatalogueHandlers(server, options, available);
  registerTaskHandlers(server, options);
  return server;
}

/** The capabilities `/mcp` advertises: tools always, the rest (the MCP Apps extension too) as far as some server has them. */
export function advertised(available: AggregateCapabilities): ServerCapabilities {
  return {
    tools: { listChanged: true },
    // Tasks the gateway runs for any server (issue #41): always offered, used for the tools the config names.
    // Apps pass through (app-uris.ts): a server's declaration of the extension is the aggregate's.
    extensions: { [TASKS_EXTENSION]: {}, ...(available.apps ? { [UI_EXTENSION]: {} } : {}) },
    ...(available.prompts ? { prompts: { listChanged: true } } : {}),
    ...(available.resources ? { resources: { listChanged: true, ...(available.subscribe ? { subscribe: true } : {}) } } : {}),
    ...(available.completions ? { completions: {} } : {}),
    ...(available.logging ? { logging: {} } : {}),
  };
}

async function untilReadyOrAborted(runtime: Pick<SwitchboardRuntime, 'whenReady'>, signal: AbortSignal): Promise<void> {
  // A failed start still leaves a (possibly empty) catalogue worth serving; an aborted wait ends quietly.
  await waitFor(
    runtime.whenReady().catch(() => undefined),
    { signal },
  ).catch(() => undefined);
}
