import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { onTestFinished } from 'vitest';
import type { Cleanup } from './process.js';

export interface McpClientOptions {
  /** The SDK's version negotiation: `legacy` (a 2025-era session) or a pinned revision. @default the SDK's own */
  era?: 'legacy' | { pin: string };
  /** An agent's key, sent as `Authorization: Bearer …`. */
  key?: string;
  capabilities?: ClientCapabilities;
  /** @default 'test' */
  name?: string;
  /** @default onTestFinished */
  cleanup?: Cleanup;
}

/**
 * An SDK client connected to the daemon's `/mcp` at `url`, as an agent connects; closed when the
 * test finishes (a close that fails, the daemon already gone, is no failure of the test).
 */
export async function mcpClient(url: string, options: McpClientOptions = {}): Promise<Client> {
  const { era, key, capabilities, name = 'test', cleanup = onTestFinished } = options;
  const client = new Client({ name, version: '1.0.0' }, { ...(era ? { versionNegotiation: { mode: era } } : {}), ...(capabilities ? { capabilities } : {}) });
  const requestInit = key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), requestInit));
  cleanup(() => client.close().catch(() => undefined));
  return client;
}

/** The `_meta` envelope a raw 2026-07-28 request carries: a client that can answer elicitations. */
const RAW_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/** The JSON-RPC answer of a raw 2026-07-28 `tools/call`: its result or its error. */
export interface RawToolAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/**
 * One 2026-07-28 `tools/call` POSTed to `<base>/mcp` by hand, as a stateless client sends it (no
 * session, the era's headers): for what an SDK client would hide, an `input_required` result's
 * `requestState` or the replica that answers.
 */
export async function modernToolCall(base: string, params: Record<string, unknown>): Promise<RawToolAnswer> {
  const res = await fetch(new URL('/mcp', base), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: RAW_ENVELOPE } }),
  });
  // JSON, or the same answer as one SSE event: the endpoint may stream a call's answer.
  const text = await res.text();
  return JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')) as RawToolAnswer;
}
