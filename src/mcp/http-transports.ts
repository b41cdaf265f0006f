import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * The SDK's HTTP and SSE client transports, behind a dynamic import in `transports.ts`: they
 * bring the SDK's OAuth client, an EventSource and an SSE parser, which a daemon with only
 * stdio servers never needs to compile.
 */
export function createHttpTransport(
  kind: 'http' | 'sse',
  url: URL,
  options: { requestInit: RequestInit; fetch: FetchLike },
): Transport {
  return kind === 'http' ? new StreamableHTTPClientTransport(url, options) : new SSEClientTransport(url, options);
}
