import type { CallToolResult, ServerContext } from '@modelcontextprotocol/server';
import { isSwitchboardError, toErrorInfo } from '../../errors.js';
import { toolErrorResult } from '../../upstream/catalogue/tool-bridge.js';
import { callerOf } from './request-agent.js';
import { toJsonRpcError } from '../errors/jsonrpc-error.js';
import { mcpAgentTrace } from '../../telemetry/agent-trace.js';
import { runForAgent } from './agent-channel.js';
import type { AgentServerOptions } from './agent-server-options.js';
import { ApprovalPending, type RequestOptions, type ResultReader, type ScriptRunner, type ToolCaller } from '../../gateway/index.js';
import { approvalAnswerOf, approvalRound } from './approval-round.js';

export type { ToolCaller };

/**
 * The one `tools/call` path of `/mcp`, both eras: a direct call and `call_tool` (search mode,
 * meta-tools.ts) both end here, so they cannot differ. The call goes through the gateway (REST's
 * path too) and returns the server's `CallToolResult` unchanged; upstream failures are already
 * `isError` results. An unknown tool is a protocol error, `InvalidParams` (-32602), as the MCP
 * spec asks (errors/jsonrpc-error.ts). Progress is relayed under the client's own token; the
 * server's questions go to this client (agent-channel.ts). The call is cancelled upstream when
 * the client cancels (`notifications/cancelled`), when the session closes, and when the daemon's
 * shutdown grace runs out.
 */
export function toolCaller(options: AgentServerOptions): ToolCaller {
  const { gateway, continuations, relayStates, session } = options;
  const agent = { continuations, relayStates, ...(session ? { session } : {}) };
  return async (name, args, ctx) => {
    const caller = callerOf(ctx, session);
    const who = caller ? { agent: caller } : {};
    const approvalAnswer = approvalAnswerOf(ctx);
    try {
      return (await runForAgent<CallToolResult>(ctx, agent, `tools/call ${name}`, (channel, signal, onProgress) =>
        gateway.call(name, args, {
          transport: 'mcp',
          signal,
          onProgress,
          caller: channel,
          ...who,
          ...(approvalAnswer !== undefined ? { approvalAnswer } : {}),
          ...(gateway.tracing ? { trace: mcpAgentTrace(ctx) } : {}),
        }),
      )) as CallToolResult;
    } catch (err) {
      // A 2026-07-28 caller is not kept waiting for an approval: it is asked, and retries (issue #40 item 3).
      if (err instanceof ApprovalPending) return approvalRound(err, ctx) as unknown as CallToolResult;
      // An operator's no (or nobody's answer) is a failure of this call, told as one like any other (SPEC §7).
      if (isSwitchboardError(err, 'APPROVAL_DENIED') || isSwitchboardError(err, 'APPROVAL_TIMEOUT') || isSwitchboardError(err, 'POLICY_DENIED'))
        return toolErrorResult(toErrorInfo(err));
      throw toJsonRpcError(err);
    } finally {
      if (ctx.mcpReq.signal.aborted) options.onCancelled?.(ctx.mcpReq.id);
    }
  };
}

/** Codes a read of a kept result answers as a failed tool call the model can read, not a protocol error. */
const READ_FAILURES = new Set(['RESULT_NOT_FOUND', 'RESULT_EXPIRED', 'VALIDATION_FAILED']);

/**
 * `read_result` (issue #38): a read of a kept result through the gateway (guarded, audited,
 * traced as `results/read`). An unknown, another agent's, expired or malformed read is a tool
 * error with its code in `_meta`; a budget or limit refusal is the protocol error a call gets.
 */
export function resultReader(options: AgentServerOptions): ResultReader {
  const { gateway } = options;
  return async (handle, read, ctx) => {
    try {
      return (await gateway.readResult(handle, read, requestOptionsOf(ctx, options))) as CallToolResult;
    } catch (err) {
      if (isSwitchboardError(err) && READ_FAILURES.has(err.code)) return toolErrorResult(toErrorInfo(err));
      throw toJsonRpcError(err);
    }
  };
}

/**
 * `run_script` (issue #39): a code-mode script through the gateway, cancelled with the request
 * (`notifications/cancelled`, the session closing). The script's own failure is already an
 * `isError` result; a refusal (`CODE_MODE_DISABLED`, `SERVER_BUSY`, a limit) is a protocol error.
 */
export function scriptRunner(options: AgentServerOptions): ScriptRunner {
  const { gateway } = options;
  return async (code, timeoutMs, ctx) => {
    try {
      return (await gateway.runScript(code, timeoutMs, requestOptionsOf(ctx, options))) as CallToolResult;
    } catch (err) {
      throw toJsonRpcError(err);
    }
  };
}

/** A request of this session's caller on `/mcp`, cancelled with it, traced when tracing is on. */
export function requestOptionsOf(ctx: ServerContext, { gateway, session }: AgentServerOptions): RequestOptions {
  const caller = callerOf(ctx, session);
  return { transport: 'mcp', signal: ctx.mcpReq.signal, ...(caller ? { agent: caller } : {}), ...(gateway.tracing ? { trace: mcpAgentTrace(ctx) } : {}) };
}
