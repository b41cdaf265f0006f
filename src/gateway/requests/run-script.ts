import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { AgentRef } from '../agents/agent-ref.js';
import type { RequestContext, RequestOptions } from './pipeline.js';
import { scriptHost } from '../scripts/script-host.js';
import { scriptRestResult, scriptToolResult } from '../scripts/script-result.js';
import type { ScriptRuns } from '../scripts/script-runs.js';

/** What a script's calls reach: the gateway's own request path and the caller's lists. */
export interface ScriptGateway {
  scripts: Pick<ScriptRuns, 'run'>;
  /** `gateway.call`: the whole request path. */
  call(name: string, args: Record<string, unknown> | undefined, options: RequestOptions): Promise<CallToolResult>;
  /** The caller's view searched, best first. */
  search(query: string, agent: AgentRef | undefined): Promise<Tool[]>;
  /** The caller's view. */
  tools(agent: AgentRef | undefined): Tool[];
}

/**
 * Answers a `scripts/run` request (issue #39): each `tools.call` of the script is `gateway.call` —
 * the whole request path, with the run's id, the caller's view and limits, under the script's span
 * and signal. `run_script`'s result on `/mcp`, `{runId, calls, value | error, logs}` on REST.
 */
export async function runScriptRequest(ctx: RequestContext, gateway: ScriptGateway): Promise<Record<string, unknown>> {
  const { request, options } = ctx;
  if (request.method !== 'scripts/run') throw new Error('not a script');
  const { agent, transport } = options;
  const trace = ctx.span ? { ...options.trace, carrier: ctx.span.carrier() } : options.trace;
  const callOptions = (signal: AbortSignal, runId: string): RequestOptions => ({
    transport,
    signal,
    runId,
    ...(agent ? { agent } : {}),
    ...(trace ? { trace } : {}),
    ...(options.caller ? { caller: options.caller } : {}),
  });
  const outcome = await gateway.scripts.run(request.code, request.timeoutMs, agent, transport, ctx.signal, (runId) =>
    scriptHost({
      call: (name, args, signal) => gateway.call(name, args, callOptions(signal, runId)),
      search: (query) => gateway.search(query, agent),
      tools: () => gateway.tools(agent),
    }),
  );
  return transport === 'rest' ? scriptRestResult(outcome) : scriptToolResult(outcome);
}
