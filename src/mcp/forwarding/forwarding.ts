import type { Logger } from 'pino';
import { errorMessage, SwitchboardError } from '../../errors.js';
import { DEFAULT_CALL_TIMEOUT_MS, resolveCallTimeout, type CallToolOptions, type ServerConnection } from '../transport/client.js';
import { agentOptionsOf, type CallerChannel } from './caller.js';
import type { Catalogues } from '../catalogue/catalogues.js';
import type { Upstream } from '../upstream/upstream.js';

export interface ForwardOptions extends CallToolOptions {
  /** The agent behind the request, for the server's sampling / elicitation / roots requests. */
  caller?: CallerChannel;
}

/**
 * Requests that are not tool calls, routed to the server that owns what they name (SPEC §7):
 * a prompt by its exposed name, a resource by URI (or template), a completion by its reference.
 * Each is bounded by its deadline, waiting for a reconnecting server included, and answered
 * exactly as the server answered.
 */
export class Forwarding {
  /** URI → the server subscribed for it and how many subscribers share that subscription. */
  private readonly subscriptions = new Map<string, { server: string; count: number }>();

  constructor(
    private readonly catalogues: Catalogues,
    private readonly upstreamOf: (server: string) => Upstream | undefined,
    private readonly upstreams: () => Iterable<Upstream>,
    private readonly log: Logger,
  ) {}

  async getPrompt(name: string, args: Record<string, string> | undefined, options: ForwardOptions = {}): Promise<Record<string, unknown>> {
    const prompt = this.catalogues.prompts.get(name);
    const upstream = prompt && this.upstreamOf(prompt.server);
    if (!prompt || !upstream) throw new SwitchboardError('PROMPT_NOT_FOUND', `No prompt named "${name}"`);
    return this.forward(upstream, 'prompts/get', { name: prompt.originalName, ...(args ? { arguments: args } : {}) }, options);
  }

  async readResource(uri: string, options: ForwardOptions = {}): Promise<Record<string, unknown>> {
    return this.forward(this.ownerOf(uri), 'resources/read', { uri }, options);
  }

  /** `completion/complete`: a prompt argument (by the prompt's exposed name) or a template's. */
  async complete(params: Record<string, unknown>, options: CallToolOptions = {}): Promise<Record<string, unknown>> {
    const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
      const prompt = this.catalogues.prompts.get(ref.name);
      const upstream = prompt && this.upstreamOf(prompt.server);
      if (!prompt || !upstream) throw new SwitchboardError('PROMPT_NOT_FOUND', `No prompt named "${ref.name}"`);
      return this.forward(upstream, 'completion/complete', { ...params, ref: { ...ref, name: prompt.originalName } }, options);
    }
    if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
      const server = this.catalogues.resources.templateServer(ref.uri) ?? this.catalogues.resources.route(ref.uri);
      const upstream = server === undefined ? undefined : this.upstreamOf(server);
      if (!upstream) throw new SwitchboardError('RESOURCE_NOT_FOUND', `No resource or template "${ref.uri}"`);
      return this.forward(upstream, 'completion/complete', params, options);
    }
    throw new SwitchboardError('VALIDATION_FAILED', 'ref: expected {type: "ref/prompt", name} or {type: "ref/resource", uri}');
  }

  /** One upstream subscription per URI, shared by every subscriber. */
  async subscribe(uri: string, options: CallToolOptions = {}): Promise<void> {
    const existing = this.subscriptions.get(uri);
    if (existing) {
      existing.count += 1;
      return;
    }
    const upstream = this.ownerOf(uri);
    await this.withConnection(upstream, options, (connection, left) => connection.subscribeResource(uri, { ...options, timeoutMs: left }));
    const raced = this.subscriptions.get(uri);
    if (raced) raced.count += 1;
    else this.subscriptions.set(uri, { server: upstream.name, count: 1 });
  }

  async unsubscribe(uri: string, options: CallToolOptions = {}): Promise<void> {
    const subscription = this.subscriptions.get(uri);
    if (!subscription) return;
    subscription.count -= 1;
    if (subscription.count > 0) return;
    this.subscriptions.delete(uri);
    const upstream = this.upstreamOf(subscription.server);
    const connection = upstream?.connection;
    if (connection) await connection.unsubscribeResource(uri, options);
  }

  /** `logging/setLevel` for every connected server that logs; one server's refusal is only logged. */
  async setLogLevel(level: string): Promise<void> {
    const targets = [...this.upstreams()].filter((u) => u.connection && u.capabilities?.logging);
    await Promise.all(
      targets.map((upstream) =>
        this.forward(upstream, 'logging/setLevel', { level }, {}).catch((err: unknown) => {
          this.log.debug({ server: upstream.name, err: errorMessage(err) }, 'logging/setLevel not applied');
        }),
      ),
    );
  }

  private ownerOf(uri: string): Upstream {
    const server = this.catalogues.resources.route(uri);
    const upstream = server === undefined ? undefined : this.upstreamOf(server);
    if (!upstream) throw new SwitchboardError('RESOURCE_NOT_FOUND', `No server has the resource "${uri}"`);
    return upstream;
  }

  private async forward(upstream: Upstream, method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<Record<string, unknown>> {
    const { caller, ...callOptions } = options;
    // While the request runs, a question of the server goes to the agent that made it.
    if (caller) upstream.callers.add(caller);
    try {
      const agent = caller ? { agent: agentOptionsOf(caller) } : {};
      return await this.withConnection(upstream, callOptions, (connection, left) => connection.forward(method, params, { ...callOptions, ...agent, timeoutMs: left }));
    } finally {
      if (caller) upstream.callers.delete(caller);
    }
  }

  /**
   * Runs `work` on the server's connection — waiting for a reconnect in progress — within one
   * deadline for both; `left` is what the wait left of it (0: none).
   */
  private async withConnection<T>(upstream: Upstream, options: CallToolOptions, work: (connection: ServerConnection, left: number) => Promise<T>): Promise<T> {
    const startedAt = performance.now();
    const totalMs = options.timeoutMs ?? resolveCallTimeout(upstream.config);
    const connection = await upstream.waitForConnection(options.signal, totalMs > 0 ? totalMs : DEFAULT_CALL_TIMEOUT_MS);
    const left = totalMs > 0 ? Math.max(1, totalMs - (performance.now() - startedAt)) : 0;
    try {
      return await work(connection, left);
    } catch (err) {
      upstream.reportFailure(connection, err);
      throw err;
    }
  }
}
