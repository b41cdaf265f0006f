import { describe, expect, it } from 'vitest';
import { resolveTelemetry } from '../../../src/telemetry/telemetry-settings.js';

/** When telemetry turns on and how the config block and the standard OTEL_* variables combine. */
describe('resolveTelemetry', () => {
  it('is off with neither a telemetry block nor an OTLP endpoint variable', () => {
    expect(resolveTelemetry(undefined, {})).toBeUndefined();
    expect(resolveTelemetry(undefined, { OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
  });

  it('turns on from OTEL_EXPORTER_OTLP_ENDPOINT, leaving URLs and headers to the exporters', () => {
    const settings = resolveTelemetry(undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_SERVICE_NAME: 'svc',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
    });
    expect(settings).toEqual({ protocol: 'http/json', serviceName: 'svc', metrics: true, metricIntervalMs: 500, warnings: [] });
  });

  it('turns on from a traces-only endpoint, without metrics', () => {
    expect(resolveTelemetry(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toMatchObject({
      protocol: 'http/protobuf',
      serviceName: 'switchboard',
      metrics: false,
    });
  });

  it('lets the config block win and appends the signal paths to its endpoint', () => {
    const settings = resolveTelemetry(
      { endpoint: 'https://otel.example.com/base/', protocol: 'http/protobuf', serviceName: 'cfg', headers: { 'x-key': 'k' } },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318', OTEL_SERVICE_NAME: 'env', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    );
    expect(settings).toMatchObject({
      protocol: 'http/protobuf',
      serviceName: 'cfg',
      tracesUrl: 'https://otel.example.com/base/v1/traces',
      metricsUrl: 'https://otel.example.com/base/v1/metrics',
      headers: { 'x-key': 'k' },
      metrics: true,
    });
  });

  it('warns about an unsupported protocol variable and uses http/protobuf', () => {
    const settings = resolveTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(settings?.protocol).toBe('http/protobuf');
    expect(settings?.warnings).toEqual([expect.stringContaining('"grpc" is not supported')]);
  });

  it('honours OTEL_SDK_DISABLED', () => {
    expect(resolveTelemetry({ endpoint: 'http://c:4318' }, { OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });
});
