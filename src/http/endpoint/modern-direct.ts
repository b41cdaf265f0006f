import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  classifyInboundRequest,
  isJsonContentType,
  type AuthInfo,
  type InboundHttpRequest,
  type JSONRPCRequest,
  type MessageClassification,
  type Server,
} from '@modelcontextprotocol/server';
import { NodeExchange } from './node-exchange.js';

/** The 2026-07-28 revision, the one modern revision the SDK serves and our modern servers list (agent-server.ts). */
export const MODERN_REVISION = '2026-07-28';

/** A 2026-07-28 request the direct path serves: its message and its classification, from the one classification of its body. */
export interface DirectRoute {
  message: JSONRPCRequest;
  classification: MessageClassification;
}

/** What `directRoute` reads of a request: Node's own method, headers and the parsed body. */
export interface DirectFacts {
  method: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/**
 * The params fields an `Mcp-Name` header mirrors, whichever the method (the SDK's
 * `MCP_NAME_HEADER_SOURCE` names one of them per method).
 */
const NAME_FIELDS = ['name', 'uri', 'taskId'] as const;

/**
 * Whether the direct path serves this request, classified once by the SDK's classifier
 * (`classifyInboundRequest`) — or `undefined`: the SDK's own handler (`createMcpHandler`) then
 * answers it, validation ladder and all, exactly as before.
 *
 * Served directly: a JSON POST of one JSON-RPC request the classifier calls modern, naming the
 * revision our servers speak, that the SDK's entry would hand to the server unchanged — not a
 * `subscriptions/listen` (the SDK's listen router serves those), carrying the standard headers the
 * entry requires (`MCP-Protocol-Version`, `Mcp-Method`), and an `Mcp-Name` the entry's check
 * certainly passes: absent while the body names nothing it could mirror, or present, plain (no
 * surrounding whitespace, no Base64 sentinel) and equal to every `params.name`/`uri`/`taskId` the
 * body has. Anything else — a missing or mismatched header, an encoded name, an unsupported
 * revision, a notification — goes to the SDK, which answers it with its own error.
 *
 * The SDK entry's other steps before dispatch need nothing here: its client-capability check has no
 * method to check in this SDK (`REQUIRED_CLIENT_CAPABILITIES_BY_METHOD` is empty), and its
 * `x-mcp-header` and scope checks apply to `McpServer` products, not to our `Server`.
 */
export function directRoute(facts: DirectFacts): DirectRoute | undefined {
  const { method, headers, body } = facts;
  if (method !== 'POST' || !isJsonContentType(headers['content-type']) || body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const protocolVersion = headerOf(headers, 'mcp-protocol-version');
  const mcpMethod = headerOf(headers, 'mcp-method');
  if (protocolVersion === undefined || mcpMethod === undefined) return undefined;
  const mcpName = headerOf(headers, 'mcp-name');
  const request: InboundHttpRequest = { httpMethod: method, protocolVersionHeader: protocolVersion, mcpMethodHeader: mcpMethod, body };
  if (mcpName !== undefined) request.mcpNameHeader = mcpName;
  const outcome = classifyInboundRequest(request);
  if (outcome.kind !== 'modern' || outcome.messageKind !== 'request' || outcome.classification.revision !== MODERN_REVISION) return undefined;
  if (outcome.message.method === 'subscriptions/listen' || !nameCertainlyPasses(outcome.message.params, mcpName)) return undefined;
  return { message: outcome.message, classification: outcome.classification };
}

function nameCertainlyPasses(params: unknown, header: string | undefined): boolean {
  const fields = params !== null && typeof params === 'object' ? (params as Record<string, unknown>) : {};
  const named = NAME_FIELDS.map((field) => fields[field]).filter((value): value is string => typeof value === 'string');
  if (header === undefined) return named.length === 0;
  if (header.trim() !== header || header.startsWith('=?')) return false;
  return named.every((value) => value === header);
}

function headerOf(headers: IncomingMessage['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The direct 2026-07-28 path (issue #44 item 1): a pooled `Server` (modern-servers.ts) connected to
 * a `NodeExchange` per request, the answer written onto Node's response — no web `Request`,
 * `Response` or stream per request. `close()` ends the exchanges in flight (shutdown), as the SDK
 * handler's `close()` does its own.
 */
export class ModernDirect {
  readonly #take: () => Server;
  readonly #inflight = new Set<NodeExchange>();

  constructor(take: () => Server) {
    this.#take = take;
  }

  async serve(route: DirectRoute, req: IncomingMessage, res: ServerResponse, authInfo: AuthInfo | undefined): Promise<void> {
    const server = this.#take();
    const exchange = new NodeExchange(route.classification, res);
    await server.connect(exchange);
    this.#inflight.add(exchange);
    try {
      await exchange.serve(route.message, req, authInfo);
    } finally {
      this.#inflight.delete(exchange);
    }
  }

  async close(): Promise<void> {
    const closing = [...this.#inflight].map((exchange) => exchange.close());
    this.#inflight.clear();
    await Promise.all(closing);
  }
}
