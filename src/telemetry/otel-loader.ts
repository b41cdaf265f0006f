import type { Logger } from 'pino';
import { DURATION_BUCKETS } from './mcp-attributes.js';
import type { Telemetry } from './telemetry.js';
import type { TelemetrySettings } from './telemetry-settings.js';

/** Telemetry that is running: what the runner uses, and how to flush it at the end. */
export interface TelemetryHandle {
  telemetry: Telemetry;
  /** Exports what is buffered and stops the exporters. Joinable; never rejects. */
  shutdown(): Promise<void>;
}

/** The instrumentation scope of every span and metric. */
const SCOPE = 'switchboard';

/**
 * Loads the OpenTelemetry SDK and the OTLP exporters (issue #26) — with dynamic `import()` so that
 * a daemon without telemetry never loads them: in the CLI bundle they sit in chunks of their own.
 * Spans go through a batch processor (`OTEL_BSP_*` honoured), metrics through a periodic reader.
 * Nothing is registered globally: the tracer and meter are handed to the runner, which is the only
 * code that traces.
 */
export async function loadTelemetry(settings: TelemetrySettings, version: string, logger: Logger): Promise<TelemetryHandle> {
  const json = settings.protocol === 'http/json';
  const [traceSdk, metricsSdk, resources, core, traceExporter, metricExporter] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
    json ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
    settings.metrics ? (json ? import('@opentelemetry/exporter-metrics-otlp-http') : import('@opentelemetry/exporter-metrics-otlp-proto')) : undefined,
  ]);
  // The OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME detector, then ours: a configured name wins.
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': version }));
  const headers = settings.headers ? { headers: settings.headers } : {};

  const spans = new traceExporter.OTLPTraceExporter({ ...(settings.tracesUrl ? { url: settings.tracesUrl } : {}), ...headers });
  const tracerProvider = new traceSdk.BasicTracerProvider({ resource, spanProcessors: [new traceSdk.BatchSpanProcessor(spans)] });
  const readers = metricExporter
    ? [
        new metricsSdk.PeriodicExportingMetricReader({
          exporter: new metricExporter.OTLPMetricExporter({ ...(settings.metricsUrl ? { url: settings.metricsUrl } : {}), ...headers }),
          exportIntervalMillis: settings.metricIntervalMs,
          exportTimeoutMillis: Math.min(30_000, settings.metricIntervalMs),
        }),
      ]
    : [];
  const meterProvider = new metricsSdk.MeterProvider({ resource, readers });
  const meter = meterProvider.getMeter(SCOPE, version);
  const histogram = (name: string, description: string) => meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: DURATION_BUCKETS } });

  const telemetry: Telemetry = {
    tracer: tracerProvider.getTracer(SCOPE, version),
    propagator: new core.W3CTraceContextPropagator(),
    serverDuration: histogram('mcp.server.operation.duration', 'MCP request duration as observed on the receiver from the time it was received until the result is sent.'),
    clientDuration: histogram(
      'mcp.client.operation.duration',
      'The duration of the MCP request as observed on the sender from the time it was sent until the response is received.',
    ),
  };
  // The endpoint's origin only: its path may carry a tenant, its userinfo a credential; headers never.
  logger.info({ protocol: settings.protocol, endpoint: originOf(settings.tracesUrl), metrics: settings.metrics }, 'OpenTelemetry export on');

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopping ??= Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]).then((outcomes) => {
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected') logger.warn({ err: String(outcome.reason) }, 'telemetry flush failed');
      }
    }));
  return { telemetry, shutdown };
}

/** `scheme://host:port` of a URL, or "from OTEL_* variables" when the exporters read it themselves. */
function originOf(url: string | undefined): string {
  if (url === undefined) return 'from OTEL_* variables';
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}
