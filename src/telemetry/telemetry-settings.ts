import { OTLP_PROTOCOLS, type OtlpProtocol, type TelemetryConfig } from '../config/telemetry-schema.js';

/** Where and how to export, once the config block and the `OTEL_*` variables are read together. */
export interface TelemetrySettings {
  /** `http/protobuf` or `http/json`. */
  protocol: OtlpProtocol;
  /** The resource's `service.name`. */
  serviceName: string;
  /** Full signal URLs when the config names an endpoint; absent, the exporters read the `OTEL_*` variables themselves. */
  tracesUrl?: string;
  metricsUrl?: string;
  /** The config's export headers (wins over `OTEL_EXPORTER_OTLP_HEADERS`, which the exporters read otherwise). Secret. */
  headers?: Record<string, string>;
  /** Metrics are exported only where they have somewhere to go (a traces-only endpoint is not one). */
  metrics: boolean;
  /** How often metrics are exported, ms (`OTEL_METRIC_EXPORT_INTERVAL`). */
  metricIntervalMs: number;
  /** A variable that could not be honoured (an unsupported protocol), to be logged. */
  warnings: string[];
}

const DEFAULT_METRIC_INTERVAL_MS = 60_000;

/**
 * Whether telemetry is on, and how: on when the config has a `telemetry` block or the standard
 * `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless
 * `OTEL_SDK_DISABLED=true`. Undefined means off: nothing of the SDK is loaded. Pure (reads only
 * `env`), so it is cheap to ask at startup.
 */
export function resolveTelemetry(config: TelemetryConfig | undefined, env: NodeJS.ProcessEnv): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (!config && base === undefined && traces === undefined) return undefined;
  const warnings: string[] = [];
  const settings: TelemetrySettings = {
    protocol: config?.protocol ?? protocolFromEnv(env, warnings),
    serviceName: config?.serviceName ?? nonEmpty(env.OTEL_SERVICE_NAME) ?? 'switchboard',
    metrics:
      config?.endpoint !== undefined || base !== undefined || nonEmpty(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) !== undefined || (config !== undefined && traces === undefined),
    metricIntervalMs: positiveInt(env.OTEL_METRIC_EXPORT_INTERVAL) ?? DEFAULT_METRIC_INTERVAL_MS,
    warnings,
  };
  if (config?.endpoint !== undefined) {
    // As OTEL_EXPORTER_OTLP_ENDPOINT: a base URL the signal paths are appended to.
    const root = config.endpoint.replace(/\/+$/, '');
    settings.tracesUrl = `${root}/v1/traces`;
    settings.metricsUrl = `${root}/v1/metrics`;
  }
  if (config?.headers) settings.headers = { ...config.headers };
  return settings;
}

/** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else http/protobuf (the spec's default). */
function protocolFromEnv(env: NodeJS.ProcessEnv, warnings: string[]): OtlpProtocol {
  const named = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  if (named === undefined) return 'http/protobuf';
  if ((OTLP_PROTOCOLS as readonly string[]).includes(named)) return named as OtlpProtocol;
  warnings.push(`OTEL_EXPORTER_OTLP_PROTOCOL "${named}" is not supported (only ${OTLP_PROTOCOLS.join(', ')}); using http/protobuf`);
  return 'http/protobuf';
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function positiveInt(value: string | undefined): number | undefined {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}
