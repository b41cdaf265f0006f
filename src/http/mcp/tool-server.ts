import { Server, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult, RequestId, Tool } from '@modelcontextprotocol/server';
import { isSwitchboardError } from '../../errors.js';
import { INSTANCE_META_KEY, ORIGIN_META_KEY, originOf } from '../../mcp/instance.js';
import type { MCPManager } from '../../mcp/manager.js';
import type { SwitchboardRuntime } from '../../runtime.js';
import { PACKAGE_VERSION } from '../package-info.js';
import type { InFlightCalls } from '../in-flight-calls.js';

/** What `/mcp` needs of the manager. */
export type ToolSource = Pick<MCPManager, 'getCatalogue' | 'callTool' | 'identity' | 'instanceAd' | 'listHints'>;

/**
 * How long a 2026-07-28 client may reuse the aggregated list when no upstream gave a hint. Short:
 * a client that does not listen for `tools/list_changed` still sees a change within seconds.
 */
export const DEFAULT_LIST_TTL_MS = 10_000;

/** What `/mcp` reads of a catalogue entry; the bridge's extra fields stay off the wire. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
  _meta?: Tool['_meta'];
}

/**
 * The MCP view of the catalogue, rebuilt only when the catalogue version moves, so every session
 * shares one array and `tools/list` costs nothing per request.
 */
export class McpToolList {
  private version = -1;
  private tools: Tool[] = [];

  constructor(private readonly manager: ToolSource) {}

  list(): Tool[] {
    const catalogue = this.manager.getCatalogue();
    if (catalogue.version !== this.version) {
      const selfId = this.manager.identity.id;
      this.tools = catalogue.list().map((tool: ListedTool) => withOrigin(toMcpTool(tool), selfId));
      this.version = catalogue.version;
    }
    return this.tools;
  }
}

export interface ToolServerOptions {
  manager: ToolSource;
  runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>;
  tools: McpToolList;
  /** Calls in flight on `/mcp`: drained on shutdown, aborted together when its grace runs out. */
  calls: InFlightCalls;
  /**
   * Called after a call the client cancelled has ended. The SDK sends no response for it, so
   * its response stream would stay open until the session ends unless it is closed here.
   */
  onCancelled?: (requestId: RequestId) => void;
}

/**
 * One low-level SDK `Server` per `/mcp` session, advertising `tools` with `listChanged`.
 *
 * - `tools/list` serves the aggregated catalogue as is (no pagination, no re-validation).
 * - `tools/call` goes through `manager.callTool` and returns its `CallToolResult` unchanged;
 *   upstream failures are already `isError` results. An unknown tool is a protocol error,
 *   `InvalidParams` (-32602), as the MCP spec asks. The call is cancelled upstream when the
 *   client cancels (`notifications/cancelled`), when the session closes, and when the daemon's
 *   shutdown grace runs out.
 */
export function createToolServer(options: ToolServerOptions): Server {
  const { manager, runtime, tools, calls } = options;
  const server = new Server(
    { name: 'switchboard', version: PACKAGE_VERSION },
    {
      capabilities: { tools: { listChanged: true } },
      instructions: 'Tools of every MCP server Switchboard is connected to, named mcp_<server>_<tool>.',
    },
  );

  server.setRequestHandler('tools/list', async (request, ctx) => {
    // Before the startup gate the list would be partial; the gate is short (SPEC §1). Another
    // Switchboard (it says so in `_meta`) gets the partial list at once and the changes as
    // list_changed: if it waited, two daemons aggregating each other would deadlock at start.
    const fromSwitchboard = request.params?._meta?.[INSTANCE_META_KEY] !== undefined;
    if (runtime.state === 'starting' && !fromSwitchboard) await untilReadyOrAborted(runtime, ctx.mcpReq.signal);
    // The instance tree lets another Switchboard aggregating this one see a loop (SPEC §11).
    const result = { tools: tools.list(), _meta: { [INSTANCE_META_KEY]: manager.instanceAd() } };
    // Caching hints exist only in the 2026-07-28 era, whose requests carry the `_meta` envelope.
    return ctx.mcpReq.envelope ? { ...result, ...manager.listHints(DEFAULT_LIST_TTL_MS) } : result;
  });

  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    if (runtime.state === 'starting') await untilReadyOrAborted(runtime, ctx.mcpReq.signal);
    const controller = calls.begin();
    const onAbort = (): void => controller.abort(ctx.mcpReq.signal.reason);
    ctx.mcpReq.signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (ctx.mcpReq.signal.aborted) onAbort();
      return await manager.callTool(name, args, { signal: controller.signal });
    } catch (err) {
      if (isSwitchboardError(err, 'TOOL_NOT_FOUND')) throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
      throw err;
    } finally {
      ctx.mcpReq.signal.removeEventListener('abort', onAbort);
      calls.end(controller);
      if (ctx.mcpReq.signal.aborted) options.onCancelled?.(ctx.mcpReq.id);
    }
  });

  return server;
}

export function toMcpTool(tool: ListedTool): Tool {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    ...(tool._meta !== undefined ? { _meta: tool._meta } : {}),
  };
}

/** The tool as served: the instances it passed through, this one first (see mcp/instance.ts). */
function withOrigin(tool: Tool, selfId: string): Tool {
  return { ...tool, _meta: { ...tool._meta, [ORIGIN_META_KEY]: [selfId, ...originOf(tool)] } };
}

async function untilReadyOrAborted(
  runtime: Pick<SwitchboardRuntime, 'whenReady'>,
  signal: AbortSignal,
): Promise<void> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    // A failed start still leaves a (possibly empty) catalogue worth serving.
    await Promise.race([runtime.whenReady().catch(() => undefined), aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
