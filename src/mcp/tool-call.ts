import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../errors.js';
import type { ServerConnection } from './client.js';
import { toolErrorResult } from './tool-bridge.js';

export interface ToolCallOptions {
  signal?: AbortSignal;
  /** Overrides the server's `callTimeout`. */
  timeoutMs?: number;
}

/**
 * Calls one upstream tool. Transport and protocol failures (including a connection that never
 * came up, or closed mid-call) become `MCP error: …` results so an agent always gets an answer;
 * a caller abort stays an abort, because nobody is left to read a result.
 */
export async function callUpstreamTool(
  getConnection: (signal?: AbortSignal) => Promise<ServerConnection>,
  originalName: string,
  args: Record<string, unknown> | undefined,
  options: ToolCallOptions & { defaultTimeoutMs: number },
): Promise<CallToolResult> {
  const { signal } = options;
  try {
    const connection = await getConnection(signal);
    return await connection.callTool(originalName, args, {
      ...(signal ? { signal } : {}),
      timeoutMs: options.timeoutMs ?? options.defaultTimeoutMs,
    });
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    return toolErrorResult(errorMessage(err));
  }
}
