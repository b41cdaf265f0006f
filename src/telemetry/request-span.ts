import { performance } from 'node:perf_hooks';
import { defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { addressAttributes, ATTR, errorTypeOf, methodAttributes, networkTransportOf, resultErrorType, spanName, type Attributes } from './mcp-attributes.js';
import type { AgentTrace, AttemptTarget, Telemetry, UpstreamTrace } from './telemetry.js';

/** The request as the runner has it: a method with a tool or prompt name, or a URI. */
export interface TracedRequest {
  method: string;
  name?: string;
  uri?: string;
}

/**
 * One agent request under a SERVER span (issue #26): continued from the agent's trace context when
 * it sent one, timed into `mcp.server.operation.duration`, and the parent of every upstream
 * attempt's CLIENT span (`attempt`). Created by the runner only when telemetry is configured.
 */
export class RequestSpan implements UpstreamTrace {
  readonly #telemetry: Telemetry;
  readonly #span: Span;
  /** The context the attempts are children of: the agent's trace with this span in it. */
  readonly #context: Context;
  readonly #metric: Attributes;
  readonly #started = performance.now();
  #ended = false;

  constructor(telemetry: Telemetry, request: TracedRequest, transport: string, agent: AgentTrace | undefined) {
    this.#telemetry = telemetry;
    const parent = agent?.carrier
      ? telemetry.propagator.extract(ROOT_CONTEXT, agent.carrier, { get: (c, k) => c[k as keyof typeof c], keys: (c) => Object.keys(c) })
      : ROOT_CONTEXT;
    const { attributes, target } = methodAttributes(request.method, request);
    // Both APIs come in over HTTP.
    attributes[ATTR.networkTransport] = 'tcp';
    if (agent?.protocolVersion !== undefined) attributes[ATTR.protocolVersion] = agent.protocolVersion;
    this.#metric = { ...attributes };
    delete this.#metric[ATTR.resourceUri];
    attributes[ATTR.apiTransport] = transport;
    if (agent?.sessionId !== undefined) attributes[ATTR.sessionId] = agent.sessionId;
    if (agent?.requestId !== undefined) attributes[ATTR.requestId] = String(agent.requestId);
    this.#span = telemetry.tracer.startSpan(spanName(request.method, target), { kind: SpanKind.SERVER, attributes }, parent);
    this.#context = trace.setSpan(parent, this.#span);
  }

  /** This span's context as a carrier: requests made on its behalf (a script's calls, issue #39) are its children. */
  carrier(): Record<string, string> {
    const carrier: Record<string, string> = {};
    this.#telemetry.propagator.inject(this.#context, carrier, defaultTextMapSetter);
    return carrier;
  }

  /** Ends the span: `error` when it failed, `result` to tell a tool's `isError` answer. Once. */
  end(result: unknown, error: unknown, server: string | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    const method = this.#metric[ATTR.method] as string;
    const errorType = error !== undefined ? errorTypeOf(error) : resultErrorType(method, result);
    if (server) this.#span.setAttribute(ATTR.upstream, server);
    finish(this.#span, errorType);
    const metric = errorType === undefined ? this.#metric : { ...this.#metric, [ATTR.errorType]: errorType };
    this.#telemetry.serverDuration.record((performance.now() - this.#started) / 1000, metric);
  }

  async attempt<T>(target: AttemptTarget, method: string, params: Record<string, unknown>, send: (meta: Record<string, string>) => Promise<T>): Promise<T> {
    const { tracer, propagator, clientDuration } = this.#telemetry;
    const { attributes, target: name } = methodAttributes(method, params);
    attributes[ATTR.networkTransport] = networkTransportOf(target.transport);
    if (target.protocolVersion !== undefined) attributes[ATTR.protocolVersion] = target.protocolVersion;
    const address = target.transport === 'stdio' ? undefined : addressAttributes(target.url);
    if (address) Object.assign(attributes, address);
    const metric: Attributes = { ...attributes };
    delete metric[ATTR.resourceUri];
    attributes[ATTR.upstream] = target.server;
    const span = tracer.startSpan(spanName(method, name), { kind: SpanKind.CLIENT, attributes }, this.#context);
    const meta: Record<string, string> = {};
    propagator.inject(trace.setSpan(this.#context, span), meta, defaultTextMapSetter);
    const started = performance.now();
    let errorType: string | undefined;
    try {
      const result = await send(meta);
      errorType = resultErrorType(method, result);
      return result;
    } catch (err) {
      errorType = errorTypeOf(err);
      throw err;
    } finally {
      finish(span, errorType);
      if (errorType !== undefined) metric[ATTR.errorType] = errorType;
      clientDuration.record((performance.now() - started) / 1000, metric);
    }
  }
}

/** Sets the outcome and ends the span. The status carries the error type only, never a message (it may quote arguments). */
function finish(span: Span, errorType: string | undefined): void {
  if (errorType !== undefined) {
    span.setAttribute(ATTR.errorType, errorType);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  }
  span.end();
}
