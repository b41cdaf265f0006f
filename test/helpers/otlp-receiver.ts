import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import type { Cleanup } from './process.js';

/** One OTLP/HTTP export as it arrived. */
export interface OtlpExport {
  path: string;
  contentType: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A span of an OTLP/JSON export, attributes flattened to `key → value`. */
export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  /** The resource's attributes (service.name, …). */
  resource: Record<string, string | number | boolean>;
}

/** OTLP span kinds (SPAN_KIND_SERVER = 2, SPAN_KIND_CLIENT = 3). */
export const SPAN_KIND = { server: 2, client: 3 } as const;

export interface OtlpReceiver {
  /** Base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (no trailing slash). */
  url: string;
  exports: OtlpExport[];
  /** Every span of every http/json trace export so far. */
  spans(): ReceivedSpan[];
  /** Resolves once `test` holds over what has arrived (checked again at each export). */
  until<T>(test: () => T | undefined | false): Promise<T>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function flatten(attributes: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes ?? []) {
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue);
  }
  return out;
}

/**
 * A plain OTLP/HTTP receiver on 127.0.0.1:<random port>: accepts every export with 200 and keeps
 * it; decodes http/json trace exports into spans. Closed when the test finishes (or by `cleanup`).
 */
export async function startOtlpReceiver(cleanup: Cleanup = onTestFinished): Promise<OtlpReceiver> {
  const exports: OtlpExport[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      exports.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
      for (const wake of [...waiters]) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;

  const spans = (): ReceivedSpan[] => {
    const out: ReceivedSpan[] = [];
    for (const e of exports) {
      if (e.path !== '/v1/traces' || !e.contentType.includes('json')) continue;
      const body = JSON.parse(e.body.toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{ spans?: Array<Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: KeyValue[] }> }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = flatten(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const span of ss.spans ?? []) out.push({ ...span, parentSpanId: span.parentSpanId ?? '', attributes: flatten(span.attributes), resource });
        }
      }
    }
    return out;
  };

  const until = <T>(test: () => T | undefined | false): Promise<T> =>
    new Promise((resolve) => {
      const check = (): boolean => {
        const value = test();
        if (value === undefined || value === false) return false;
        waiters.delete(check as () => void);
        resolve(value);
        return true;
      };
      if (!check()) waiters.add(check as () => void);
    });

  return { url: `http://127.0.0.1:${port}`, exports, spans, until };
}
