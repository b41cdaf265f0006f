import { ProtocolError, ProtocolErrorCode, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/client';
import { errorMessage, isSwitchboardError, toErrorInfo } from '../../errors.js';
import { DEFAULT_CALL_TIMEOUT_MS, type ServerConnection } from '../transport/client.js';
import { mayHaveBeenDelivered, meansConnectionLost } from '../upstream/failure.js';
import type { AgentOptions } from './input-required.js';
import { toolErrorResult } from '../catalogue/tool-bridge.js';
import type { Upstream } from '../upstream/upstream.js';

export interface ToolCallOptions {
  signal?: AbortSignal;
  /** Overrides the server's `callTimeout`; bounds the whole call, waiting for the server included. */
  timeoutMs?: number;
  /** Every progress notification of the server for this call (each also resets its deadline). */
  onProgress?: (progress: Progress) => void;
  /** The agent behind the call, as a modern-era server sees it. */
  agent?: AgentOptions;
}

/** What the call path needs of the catalogue's tool. */
export interface CallableTool {
  originalName: string;
  annotations?: Tool['annotations'];
}

/**
 * Calls one upstream tool (SPEC §7). The deadline (`timeoutMs`, else the server's `callTimeout`)
 * bounds the whole call: waiting for a server that is connecting or reconnecting, then the
 * request. With no deadline at all the wait for a connection is still bounded (by the default
 * call timeout): nobody waits unbounded on a server that may never come back.
 *
 * When the connection is lost under the call it is retried once, after the reconnect and within
 * the same deadline — if the request never reached the server (a forgotten session, a refused
 * connection), or if the tool says a replay is harmless (`readOnlyHint` or `idempotentHint`).
 * Otherwise the caller learns that the call may or may not have run (`CALL_OUTCOME_UNKNOWN`).
 *
 * Failures become `MCP error: …` results carrying their code in `_meta`; a caller abort stays an
 * abort, because nobody is left to read a result.
 */
export async function callThroughUpstream(
  upstream: Upstream,
  tool: CallableTool,
  args: Record<string, unknown> | undefined,
  options: ToolCallOptions & { defaultTimeoutMs: number; now: () => number },
): Promise<CallToolResult> {
  const { signal, now, onProgress, agent } = options;
  const started = now();
  const totalMs = options.timeoutMs ?? options.defaultTimeoutMs;
  // At least 1 ms: a spent deadline must still fail as a timeout, not turn into "no deadline".
  const remaining = (): number => (totalMs > 0 ? Math.max(1, totalMs - (now() - started)) : 0);
  let retried = false;
  for (;;) {
    let connection: ServerConnection | undefined;
    try {
      connection = await upstream.waitForConnection(signal, totalMs > 0 ? remaining() : DEFAULT_CALL_TIMEOUT_MS);
      return await connection.callTool(tool.originalName, args, {
        ...(signal ? { signal } : {}),
        ...(onProgress ? { onProgress } : {}),
        ...(agent ? { agent } : {}),
        timeoutMs: remaining(),
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      if (!connection) return toolErrorResult(toErrorInfo(err, 'SERVER_NOT_CONNECTED'));
      // The request got what was left of the deadline; the caller knows the deadline itself.
      if (isSwitchboardError(err, 'TOOL_CALL_TIMEOUT')) {
        return toolErrorResult({ code: err.code, message: `Tool "${tool.originalName}" timed out after ${totalMs} ms (MCP server "${upstream.name}")` });
      }
      const kind = upstream.reportFailure(connection, err);
      // An error about the agent itself (a capability it did not declare, a URL it must open)
      // is the agent's to handle, as the protocol error it is.
      if (options.agent && isForTheAgent(err)) throw err;
      if (!meansConnectionLost(kind)) return toolErrorResult(toErrorInfo(err, 'UPSTREAM_ERROR'));
      if (!retried && (!mayHaveBeenDelivered(kind) || isReplaySafe(tool))) {
        retried = true;
        continue;
      }
      if (!mayHaveBeenDelivered(kind)) return toolErrorResult(toErrorInfo(err, 'SERVER_CLOSED'));
      return toolErrorResult({
        code: 'CALL_OUTCOME_UNKNOWN',
        message:
          `The connection to MCP server "${upstream.name}" was lost during the call to "${tool.originalName}"; ` +
          `it may or may not have run, and it was not retried because the tool is not marked read-only or idempotent (${errorMessage(err)})`,
      });
    }
  }
}

/** MissingRequiredClientCapability (-32021) and UrlElicitationRequired (-32042). */
function isForTheAgent(err: unknown): boolean {
  return ProtocolError.isInstance(err) && (err.code === ProtocolErrorCode.MissingRequiredClientCapability || err.code === ProtocolErrorCode.UrlElicitationRequired);
}

/** A tool that says running it twice does no harm. */
function isReplaySafe(tool: CallableTool): boolean {
  return tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true;
}
