import { z } from 'zod';

/** The OTLP encodings Switchboard can export with (both over HTTP; no gRPC). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/**
 * OpenTelemetry export (issue #26, SPEC §15). Present, the SDK and the OTLP exporters are loaded
 * and every agent request is traced; absent, only the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) turns tracing on. The fields win over the `OTEL_*`
 * variables they correspond to.
 */
export const TelemetryConfigSchema = z
  .object({
    /**
     * The collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to `<endpoint>/v1/traces`
     * and metrics to `<endpoint>/v1/metrics`. @default the OTEL_* variables, else http://localhost:4318
     */
    endpoint: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /** @default OTEL_EXPORTER_OTLP_PROTOCOL, else "http/protobuf" */
    protocol: z.enum(OTLP_PROTOCOLS, { error: `must be one of ${OTLP_PROTOCOLS.map((p) => `"${p}"`).join(', ')}` }).optional(),
    /** The resource's `service.name`. @default OTEL_SERVICE_NAME, else "switchboard" */
    serviceName: z.string().min(1).optional(),
    /** Sent with every export (an API key, say); never logged or shown. @default OTEL_EXPORTER_OTLP_HEADERS */
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

export type TelemetryConfig = z.infer<typeof TelemetryConfigSchema>;
