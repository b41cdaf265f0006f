import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Telemetry } from '../../src/telemetry/telemetry.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';

/**
 * Issue #26 beyond tool calls, in process: a daemon handed a Telemetry over the real SDK with
 * in-memory exporters (how an embedder brings its own), serving a real rich-stdio fixture. Prompts,
 * resources and a failing tool get the conventions' names, attributes and durations.
 */
function inMemoryTelemetry(): { telemetry: Telemetry; spans: InMemorySpanExporter; metrics: () => Promise<Map<string, Array<Record<string, unknown>>>> } {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  onTestFinished(async () => {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  });
  const meter = meterProvider.getMeter('test');
  const telemetry: Telemetry = {
    tracer: tracerProvider.getTracer('test'),
    propagator: new W3CTraceContextPropagator(),
    serverDuration: meter.createHistogram('mcp.server.operation.duration', { unit: 's' }),
    clientDuration: meter.createHistogram('mcp.client.operation.duration', { unit: 's' }),
  };
  const metrics = async () => {
    await reader.forceFlush();
    const out = new Map<string, Array<Record<string, unknown>>>();
    for (const resource of exporter.getMetrics()) {
      for (const scope of resource.scopeMetrics) {
        for (const metric of scope.metrics)
          out.set(
            metric.descriptor.name,
            metric.dataPoints.map((p) => p.attributes as Record<string, unknown>),
          );
      }
    }
    return out;
  };
  return { telemetry, spans, metrics };
}

const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((s) => s.name === name);

describe('tracing prompts, resources and failures (issue #26)', () => {
  it('names prompt gets after the prompt, resource reads after the method (the URI as an attribute), and records error.type', async () => {
    const { telemetry, spans, metrics } = inMemoryTelemetry();
    const sb = await startDaemon({ servers: { rich: fixtureServerConfig('rich-stdio', { env: { ERA: 'legacy' } }) }, deps: { telemetry } });

    expect((await sb.json('/prompts/mcp_rich_greet/get', { method: 'POST', body: { arguments: { name: 'Ada' } } })).status).toBe(200);
    expect((await sb.json('/resources/read?uri=fixture%3A%2F%2Fstatic%2Fhello')).status).toBe(200);
    expect((await sb.json('/prompts/mcp_rich_nope/get', { method: 'POST', body: {} })).status).toBe(404);

    const finished = spans.getFinishedSpans();
    const [promptServer] = named(finished, 'prompts/get mcp_rich_greet');
    const [promptClient] = named(finished, 'prompts/get greet');
    expect(promptServer?.kind).toBe(SpanKind.SERVER);
    expect(promptServer?.attributes).toMatchObject({ 'mcp.method.name': 'prompts/get', 'gen_ai.prompt.name': 'mcp_rich_greet', 'switchboard.transport': 'rest' });
    expect(promptClient?.kind).toBe(SpanKind.CLIENT);
    expect(promptClient?.parentSpanContext?.spanId).toBe(promptServer?.spanContext().spanId);
    expect(promptClient?.attributes).toMatchObject({ 'gen_ai.prompt.name': 'greet', 'network.transport': 'pipe' });

    const reads = named(finished, 'resources/read');
    expect(reads.map((s) => s.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT].sort());
    for (const read of reads) expect(read.attributes['mcp.resource.uri']).toBe('fixture://static/hello');

    const [missing] = named(finished, 'prompts/get mcp_rich_nope');
    expect(missing?.attributes['error.type']).toBe('PROMPT_NOT_FOUND');
    expect(missing?.status.code).toBe(SpanStatusCode.ERROR);

    const recorded = await metrics();
    expect(recorded.get('mcp.server.operation.duration')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ 'mcp.method.name': 'prompts/get', 'gen_ai.prompt.name': 'mcp_rich_greet' }),
        expect.objectContaining({ 'mcp.method.name': 'prompts/get', 'error.type': 'PROMPT_NOT_FOUND' }),
      ]),
    );
    // A URI is high-cardinality: it stays out of the metrics.
    for (const points of recorded.values()) for (const attributes of points) expect(attributes['mcp.resource.uri']).toBeUndefined();
    expect(recorded.get('mcp.client.operation.duration')).toEqual(
      expect.arrayContaining([expect.objectContaining({ 'mcp.method.name': 'resources/read', 'network.transport': 'pipe' })]),
    );
  });
  it('traces a read of a kept result (issue #38) as a SERVER span of its own, never sent upstream', async () => {
    const { telemetry, spans } = inMemoryTelemetry();
    const sb = await startDaemon({ servers: { big: fixtureServerConfig('big-results') }, config: { maxResultTokens: 500 }, deps: { telemetry } });
    const cut = await sb.json<{ truncated: { handle: string } }>('/tools/mcp_big_log_lines/call', { method: 'POST', body: { arguments: { chars: 20_000 } } });
    expect((await sb.json(`/results/${cut.body.truncated.handle}?offset=0&length=10`)).status).toBe(200);
    expect((await sb.json('/results/res_unknown')).status).toBe(404);
    const reads = named(spans.getFinishedSpans(), 'results/read');
    expect(reads.map((s) => [s.kind, s.attributes['mcp.method.name'], s.attributes['error.type']])).toEqual([
      [SpanKind.SERVER, 'results/read', undefined],
      [SpanKind.SERVER, 'results/read', 'RESULT_NOT_FOUND'],
    ]);
  });
});

describe('tracing a code-mode script (issue #39)', () => {
  it("nests each of a script's calls under the script's SERVER span, each with its CLIENT span under it", async () => {
    const { telemetry, spans } = inMemoryTelemetry();
    const sb = await startDaemon({ servers: { echo: fixtureServerConfig('echo-stdio') }, config: { codeMode: true }, deps: { telemetry } });
    const ran = await sb.json<{ value: number }>('/scripts/run', {
      method: 'POST',
      body: { code: 'const a = await tools.call("mcp_echo_add", { a: 1, b: 2 });\nconst b = await tools.call("mcp_echo_add", { a: a.sum, b: 4 });\nreturn b.sum;' },
    });
    expect(ran.body.value).toBe(7);
    const finished = spans.getFinishedSpans();
    const [script] = named(finished, 'scripts/run');
    expect(script?.kind).toBe(SpanKind.SERVER);
    const calls = named(finished, 'tools/call mcp_echo_add');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.parentSpanContext?.spanId).toBe(script?.spanContext().spanId);
      expect(call.spanContext().traceId).toBe(script?.spanContext().traceId);
      const [attempt] = named(finished, 'tools/call add').filter((s) => s.parentSpanContext?.spanId === call.spanContext().spanId);
      expect(attempt?.kind).toBe(SpanKind.CLIENT);
    }
  });
});
