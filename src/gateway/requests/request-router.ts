import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { errorMessage, isSwitchboardError, SwitchboardError, toErrorInfo } from '../../errors.js';
import type { AgentView } from '../agents/agent-view.js';
import type { Catalogues } from '../../upstream/catalogue/catalogues.js';
import { toolErrorResult } from '../../upstream/catalogue/tool-bridge.js';
import { exposeReadResult, exposeToolResult, upstreamUri } from '../../upstream/catalogue/app-uris.js';
import type { UpstreamMethod, UpstreamRequestOptions } from '../../upstream/server/upstream-request.js';
import type { Upstream } from '../../upstream/server/upstream.js';
import type { ApprovalTarget } from '../approvals/approvals.js';
import type { CallerChannel } from '../../upstream/transport/caller.js';
import type { UpstreamTrace } from '../../telemetry/telemetry.js';
import type { ReadRequest } from '../results/result-reader.js';
import { loadedSdk } from '../../upstream/sdk.js';

/** A request an agent makes of the aggregate, before it is routed to a server (SPEC §7). */
export type AgentRequest =
  /** `task`: a task-augmented call of a server that runs its own tasks (issue #41), answered by its CreateTaskResult. */
  | { method: 'tools/call'; name: string; arguments?: Record<string, unknown> | undefined; task?: Record<string, unknown> | undefined }
  | { method: 'prompts/get'; name: string; arguments?: Record<string, string> | undefined }
  | { method: 'resources/read'; uri: string }
  | { method: 'completion/complete'; params: Record<string, unknown> }
  | { method: 'resources/subscribe'; uri: string }
  | { method: 'resources/unsubscribe'; uri: string }
  | { method: 'logging/setLevel'; level: string }
  /** A server's own task (issue #41), by the server's id for it. */
  | { method: 'tasks/get' | 'tasks/result' | 'tasks/cancel'; server: string; taskId: string }
  /** A part of a kept result (issue #38): answered by the result guard, never sent to a server. */
  | { method: 'results/read'; handle: string; read: ReadRequest }
  /** A code-mode script (issue #39): run by the script stage, its calls each a request of their own. */
  | { method: 'scripts/run'; code: string; timeoutMs?: number | undefined };

export interface SendOptions {
  signal?: AbortSignal;
  /** Bounds the whole request, waiting for the server included. @default the server's `callTimeout` */
  timeoutMs?: number;
  onProgress?: (progress: Progress) => void;
  /** The agent behind the request, for the server's sampling / elicitation / roots requests. */
  caller?: CallerChannel;
  /**
   * Asked once a tool call is routed, before it is sent: a promise holds the call until it
   * settles (`requireApproval`, see approvals.ts); undefined lets it through at once.
   */
  hold?: (target: ApprovalTarget) => Promise<void> | undefined;
  /**
   * The calling agent's view (issue #22): what lies outside it is answered exactly as an unknown
   * name (no enumeration), with an error `isViewDenial` recognises. @default everything
   */
  view?: AgentView;
  /** Traces each attempt at the upstream (issue #26). @default none */
  trace?: UpstreamTrace;
}

/** The refusals of requests outside an agent's view: the unknown-name errors, told apart only here. */
const denials = new WeakSet<SwitchboardError>();

/** Whether `err` refused a request because it lay outside the agent's view (the audit's `denied`). */
export function isViewDenial(err: unknown): boolean {
  return err instanceof SwitchboardError && denials.has(err);
}

function denial(err: SwitchboardError): SwitchboardError {
  denials.add(err);
  return err;
}

/** What the router routes by: the manager's catalogues and upstreams. */
export interface RouteTable {
  readonly catalogues: Catalogues;
  upstream(name: string): Upstream | undefined;
  upstreams(): Iterable<Upstream>;
}

/** Where a request goes and how it is treated there: the per-kind data of the one request path. */
interface Route {
  upstream: Upstream;
  method: UpstreamMethod;
  params: Record<string, unknown>;
  replaySafe: boolean;
  label: string;
}

/**
 * Routes each agent request to the server that owns what it names — a tool or prompt by its
 * exposed name, a resource by URI (or template), a completion by its reference — and sends it
 * through that server's `Upstream.request`, the one path every kind takes. What differs per kind
 * is data: the retry policy (reads and read-only or idempotent tools may be replayed after a lost
 * connection) and the result's shape (a tool's failure is an `isError` result; any other kind
 * throws, for the caller's protocol to map).
 */
export class RequestRouter {
  /** URI → the server subscribed for it and how many subscribers share that subscription. */
  private readonly subscriptions = new Map<string, { server: string; count: number }>();

  private readonly catalogues: Catalogues;

  constructor(
    private readonly table: RouteTable,
    private readonly log: Logger,
  ) {
    this.catalogues = table.catalogues;
  }

  private upstreamOf(server: string): Upstream | undefined {
    return this.table.upstream(server);
  }

  /** The server a request would go to ('' when it names nothing known, or fans out); for metrics, so cheap. */
  serverOf(request: AgentRequest): string {
    switch (request.method) {
      case 'tools/call':
        return this.catalogues.tools.get(request.name)?.server ?? '';
      case 'prompts/get':
        return this.catalogues.prompts.get(request.name)?.server ?? '';
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/cancel':
        return request.server;
      case 'logging/setLevel':
      case 'results/read':
      case 'scripts/run':
        return '';
      case 'resources/unsubscribe':
        return this.subscriptions.get(request.uri)?.server ?? this.catalogues.resources.route(request.uri) ?? '';
      default:
        try {
          return this.route(request, undefined).upstream.name;
        } catch {
          return '';
        }
    }
  }

  /**
   * Sends the request. Resolves with the server's result as it answered (a tool's failure as an
   * `isError` result); rejects with `*_NOT_FOUND` for an unknown name or URI, our codes for the
   * wait, deadline and lost connections, the server's own error otherwise, or the abort reason.
   */
  async send(request: AgentRequest, options: SendOptions = {}): Promise<Record<string, unknown>> {
    switch (request.method) {
      case 'resources/subscribe':
        return this.subscribe(request.uri, options);
      case 'resources/unsubscribe':
        return this.unsubscribe(request.uri, options);
      case 'logging/setLevel':
        return this.setLogLevel(request.level, options);
      case 'results/read':
        // The result guard answers reads; without it (`maxResultTokens` off everywhere) nothing is kept.
        throw new SwitchboardError('RESULT_NOT_FOUND', `No kept result "${request.handle}"`);
      case 'scripts/run':
        // The script stage runs scripts; without it code mode is off.
        throw new SwitchboardError('CODE_MODE_DISABLED');
      case 'tools/call': {
        const route = this.route(request, options.view);
        // Held before the call's deadline starts: the deadline is the tool's, not the operator's.
        const held = options.hold?.({
          server: route.upstream.name,
          tool: route.params.name as string,
          name: request.name,
          arguments: request.arguments,
          policy: route.upstream.config,
        });
        if (!held) return this.callTool(route, options);
        await held;
        // Minutes may have passed: route again, so a tool held since (its definition changed),
        // removed or renamed meanwhile is refused now rather than called as approved.
        const now = this.route(request, options.view);
        if (now.upstream !== route.upstream || now.params.name !== route.params.name) {
          throw new SwitchboardError('TOOL_NOT_FOUND', `Tool "${request.name}" is no longer the tool that was approved`);
        }
        return this.callTool(now, options);
      }
      case 'resources/read': {
        const route = this.route(request, options.view);
        // An MCP Apps view answers under the URI the agent read (app-uris.ts).
        return exposeReadResult(route.upstream.name, await this.forward(route, options));
      }
      default:
        return this.forward(this.route(request, options.view), options);
    }
  }

  /**
   * Throws `TOOL_CHANGED` when `name` is the exposed name of a tool held because its definition
   * changed after it was served (issue #22); the message names the command that serves it.
   */
  refuseHeld(name: string, view?: AgentView): void {
    const found = this.catalogues.heldTool(name);
    if (!found) return;
    const { server, held } = found;
    // Outside the view, a held tool is as unknown as any other.
    if (view && !view.allowsTool({ name, server, annotations: held.tool.annotations })) return;
    throw new SwitchboardError(
      'TOOL_CHANGED',
      `Tool "${name}" of server "${server}" changed its definition (${held.view.changed.join(', ')}) since it was served; ` +
        `it is held until an operator approves it: switchboard tools approve ${server} ${held.tool.name}`,
    );
  }

  private async callTool(route: Route, options: SendOptions): Promise<CallToolResult> {
    // The server's own task (issue #41): its CreateTaskResult, or its refusal, as it answered.
    if (route.params.task !== undefined) return (await this.forward(route, options)) as CallToolResult;
    try {
      const result = exposeToolResult(route.upstream.name, (await this.forward(route, options)) as CallToolResult);
      this.rememberLinks(result, route.upstream.name);
      return result;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      // An error about the agent itself (a capability it did not declare, a URL it must open) is
      // the agent's to handle, as the protocol error it is; so is a busy server's "retry later".
      if ((options.caller && isForTheAgent(err)) || isSwitchboardError(err, 'SERVER_BUSY')) throw err;
      return toolErrorResult(toErrorInfo(err, 'UPSTREAM_ERROR'));
    }
  }

  private forward(route: Route, options: SendOptions): Promise<Record<string, unknown>> {
    const { upstream, method, params, replaySafe, label } = route;
    const request: UpstreamRequestOptions = { ...options, replaySafe, label };
    return upstream.request(method, params, request);
  }

  /** One upstream subscription per URI, shared by every subscriber. */
  private async subscribe(uri: string, options: SendOptions): Promise<Record<string, unknown>> {
    // An agent joins a shared subscription only for a URI in its view.
    if (options.view) this.ownerOf(uri, options.view);
    const existing = this.subscriptions.get(uri);
    if (existing) {
      existing.count += 1;
      return {};
    }
    const route = this.route({ method: 'resources/subscribe', uri }, options.view);
    await this.forward(route, options);
    const raced = this.subscriptions.get(uri);
    if (raced) raced.count += 1;
    else this.subscriptions.set(uri, { server: route.upstream.name, count: 1 });
    return {};
  }

  private async unsubscribe(uri: string, options: SendOptions): Promise<Record<string, unknown>> {
    const subscription = this.subscriptions.get(uri);
    if (!subscription) return {};
    subscription.count -= 1;
    if (subscription.count > 0) return {};
    this.subscriptions.delete(uri);
    const upstream = this.upstreamOf(subscription.server);
    // A server that is not connected holds no subscription to end.
    if (upstream?.connection)
      await this.forward({ upstream, method: 'resources/unsubscribe', params: { uri: upstreamUri(uri) }, replaySafe: true, label: `resources/unsubscribe "${uri}"` }, options);
    return {};
  }

  /**
   * `logging/setLevel` for every connected 2025-era server that logs; one server's refusal is only
   * logged. A 2026-07-28 server has no such request: it gets the level with each request instead
   * (`CallerChannel.logLevel`).
   */
  private async setLogLevel(level: string, options: SendOptions): Promise<Record<string, unknown>> {
    // An agent's level reaches only the servers in its view: it must not change what others are sent.
    const { view } = options;
    const targets = [...this.table.upstreams()].filter((u) => u.connection && u.connection.era !== 'modern' && u.capabilities?.logging && (!view || view.allowsServer(u.name)));
    await Promise.all(
      targets.map((upstream) =>
        this.forward({ upstream, method: 'logging/setLevel', params: { level }, replaySafe: true, label: 'logging/setLevel' }, options).catch((err: unknown) => {
          this.log.debug({ server: upstream.name, err: errorMessage(err) }, 'logging/setLevel not applied');
        }),
      ),
    );
    return {};
  }

  private route(request: Exclude<AgentRequest, { method: 'logging/setLevel' | 'resources/unsubscribe' | 'results/read' | 'scripts/run' }>, view: AgentView | undefined): Route {
    switch (request.method) {
      case 'tools/call': {
        const tool = this.catalogues.tools.get(request.name);
        const upstream = tool && this.upstreamOf(tool.server);
        if (!tool || !upstream) {
          this.refuseHeld(request.name, view);
          throw new SwitchboardError('TOOL_NOT_FOUND', `No tool named "${request.name}"`);
        }
        if (view && !view.allowsTool(tool)) throw denial(new SwitchboardError('TOOL_NOT_FOUND', `No tool named "${request.name}"`));
        const params = { name: tool.originalName, ...(request.arguments !== undefined ? { arguments: request.arguments } : {}), ...(request.task ? { task: request.task } : {}) };
        return { upstream, method: 'tools/call', params, replaySafe: isReplaySafe(tool), label: `Tool "${tool.originalName}"` };
      }
      case 'prompts/get': {
        const prompt = this.catalogues.prompts.get(request.name);
        const upstream = prompt && this.upstreamOf(prompt.server);
        if (!prompt || !upstream) throw new SwitchboardError('PROMPT_NOT_FOUND', `No prompt named "${request.name}"`);
        if (view && !view.allowsServer(prompt.server)) throw denial(new SwitchboardError('PROMPT_NOT_FOUND', `No prompt named "${request.name}"`));
        const params = { name: prompt.originalName, ...(request.arguments ? { arguments: request.arguments } : {}) };
        return { upstream, method: 'prompts/get', params, replaySafe: true, label: `prompts/get "${prompt.originalName}"` };
      }
      case 'resources/read':
      case 'resources/subscribe':
        return {
          upstream: this.ownerOf(request.uri, view),
          method: request.method,
          params: { uri: upstreamUri(request.uri) },
          replaySafe: true,
          label: `${request.method} "${request.uri}"`,
        };
      case 'completion/complete':
        return this.completionRoute(request.params, view);
      case 'tasks/get':
      case 'tasks/result':
      case 'tasks/cancel': {
        const upstream = this.upstreamOf(request.server);
        if (!upstream || (view && !view.allowsServer(request.server)))
          throw new SwitchboardError('TASK_NOT_FOUND', `No task "${request.taskId}" on MCP server "${request.server}"`);
        return { upstream, method: request.method, params: { taskId: request.taskId }, replaySafe: true, label: `${request.method} of task "${request.taskId}"` };
      }
    }
  }

  /** `completion/complete`: a prompt argument (by the prompt's exposed name) or a template's. */
  private completionRoute(params: Record<string, unknown>, view: AgentView | undefined): Route {
    const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
    const route = { method: 'completion/complete', replaySafe: true, label: 'completion/complete' } as const;
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
      const prompt = this.catalogues.prompts.get(ref.name);
      const upstream = prompt && this.upstreamOf(prompt.server);
      if (!prompt || !upstream) throw new SwitchboardError('PROMPT_NOT_FOUND', `No prompt named "${ref.name}"`);
      if (view && !view.allowsServer(prompt.server)) throw denial(new SwitchboardError('PROMPT_NOT_FOUND', `No prompt named "${ref.name}"`));
      return { ...route, upstream, params: { ...params, ref: { ...ref, name: prompt.originalName } } };
    }
    if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
      const server = this.catalogues.resources.templateServer(ref.uri) ?? this.catalogues.resources.route(ref.uri);
      const upstream = server === undefined ? undefined : this.upstreamOf(server);
      if (!upstream) throw new SwitchboardError('RESOURCE_NOT_FOUND', `No resource or template "${ref.uri}"`);
      if (view && !view.allowsServer(upstream.name)) throw denial(new SwitchboardError('RESOURCE_NOT_FOUND', `No resource or template "${ref.uri}"`));
      return { ...route, upstream, params: { ...params, ref: { ...ref, uri: upstreamUri(ref.uri) } } };
    }
    throw new SwitchboardError('VALIDATION_FAILED', 'ref: expected {type: "ref/prompt", name} or {type: "ref/resource", uri}');
  }

  private ownerOf(uri: string, view: AgentView | undefined): Upstream {
    const server = this.catalogues.resources.route(uri);
    const upstream = server === undefined ? undefined : this.upstreamOf(server);
    if (!upstream) throw new SwitchboardError('RESOURCE_NOT_FOUND', `No server has the resource "${uri}"`);
    if (view && !view.allowsServer(upstream.name)) throw denial(new SwitchboardError('RESOURCE_NOT_FOUND', `No server has the resource "${uri}"`));
    return upstream;
  }

  /** `resource_link` blocks of a result stay readable through Switchboard (SPEC §7). */
  private rememberLinks(result: CallToolResult, server: string): void {
    if (!Array.isArray(result.content)) return;
    for (const block of result.content) {
      if (block.type === 'resource_link' && typeof block.uri === 'string') this.catalogues.resources.rememberLink(block.uri, server);
    }
  }
}

/** MissingRequiredClientCapability (-32021) and UrlElicitationRequired (-32042). */
function isForTheAgent(err: unknown): boolean {
  const loaded = loadedSdk();
  if (!loaded) return false;
  const { ProtocolError, ProtocolErrorCode } = loaded;
  return ProtocolError.isInstance(err) && (err.code === ProtocolErrorCode.MissingRequiredClientCapability || err.code === ProtocolErrorCode.UrlElicitationRequired);
}

/** A tool that says running it twice does no harm. */
function isReplaySafe(tool: { annotations?: Tool['annotations'] }): boolean {
  return tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true;
}
