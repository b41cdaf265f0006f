import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import { isSwitchboardError } from '../../errors.js';
import type { CallerChannel } from '../../mcp/forwarding/caller.js';
import type { MCPManager } from '../../mcp/manager.js';
import type { CallMetrics, CallOutcome, CallTransport } from './call-metrics.js';
import { onClientGone } from './client-gone.js';
import { CLIENT_GONE, type InFlightCalls } from './in-flight-calls.js';

export interface RunCallOptions {
  transport: CallTransport;
  /** Overrides the server's `callTimeout` for this call. */
  timeoutMs?: number;
  /** Cancels the call (the client went away, or said so); its reason is the call's abort reason. */
  signal?: AbortSignal;
  /**
   * A REST caller's response: the call is cancelled with `CLIENT_GONE` when the client goes away
   * before the response has ended (cheaper than a `signal` of its own per call).
   */
  client?: ServerResponse;
  /** Each progress notification of the server, as it arrives. */
  onProgress?: (progress: Progress) => void;
  /** The agent behind the call, for the server's sampling / elicitation / roots requests. */
  caller?: CallerChannel;
}

export interface CallRunnerDeps {
  manager: Pick<MCPManager, 'callTool' | 'getCatalogue'>;
  /** Every call in flight, whatever its transport; aborted together at the end of shutdown's grace. */
  calls: InFlightCalls;
  metrics: CallMetrics;
}

/**
 * The one path of a tool call, for REST and `/mcp` alike (SPEC §7): it registers the call with
 * the in-flight set (so shutdown can cancel it), links the caller's cancellation, threads the
 * deadline, progress and the agent channel to the manager, and counts the call in `/metrics` by
 * transport, server, tool and outcome. What the caller's protocol makes of the result — a JSON
 * body, an SSE stream, a JSON-RPC answer — is its own business.
 */
export class CallRunner {
  constructor(private readonly deps: CallRunnerDeps) {}

  /** Calls in flight right now. */
  get inFlight(): number {
    return this.deps.calls.size;
  }

  /**
   * Runs the call. Resolves with the tool's result (upstream failures are `isError` results);
   * rejects with `TOOL_NOT_FOUND`, with `SHUTTING_DOWN`, or — when `signal` aborted it — with
   * that signal's reason.
   */
  async run(name: string, args: Record<string, unknown> | undefined, options: RunCallOptions): Promise<CallToolResult> {
    const { manager, calls, metrics } = this.deps;
    const started = performance.now();
    const server = manager.getCatalogue().get(name)?.server ?? '';
    let outcome: CallOutcome = 'error';
    let controller: AbortController | undefined;
    const { signal } = options;
    const onAbort = (): void => controller?.abort(signal?.reason);
    let stopWatchingClient: (() => void) | undefined;
    try {
      controller = calls.begin();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      const own = controller;
      if (options.client) stopWatchingClient = onClientGone(options.client, () => own.abort(CLIENT_GONE));
      const result = await manager.callTool(name, args, {
        signal: controller.signal,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(options.caller ? { caller: options.caller } : {}),
      });
      outcome = result.isError === true ? 'tool_error' : 'ok';
      return result;
    } catch (err) {
      outcome = outcomeOf(err, controller?.signal);
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stopWatchingClient?.();
      if (controller) calls.end(controller);
      metrics.record({ transport: options.transport, server, tool: name, outcome }, (performance.now() - started) / 1000);
    }
  }
}

function outcomeOf(err: unknown, signal: AbortSignal | undefined): CallOutcome {
  const reason: unknown = signal?.aborted ? signal.reason : err;
  if (isSwitchboardError(reason, 'SHUTTING_DOWN')) return 'shutdown';
  if (signal?.aborted) return 'cancelled';
  if (isSwitchboardError(err, 'TOOL_NOT_FOUND')) return 'not_found';
  return 'error';
}
