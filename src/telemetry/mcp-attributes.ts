import { isSwitchboardError } from '../errors.js';

/**
 * Names and values of the OpenTelemetry MCP semantic conventions (open-telemetry/
 * semantic-conventions-genai, docs/gen-ai/mcp.md, status Development), in one place so that the
 * spans and the metrics cannot disagree. No argument or result values ever go into attributes.
 */
export const ATTR = {
  method: 'mcp.method.name',
  sessionId: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  resourceUri: 'mcp.resource.uri',
  toolName: 'gen_ai.tool.name',
  promptName: 'gen_ai.prompt.name',
  operation: 'gen_ai.operation.name',
  requestId: 'jsonrpc.request.id',
  errorType: 'error.type',
  networkTransport: 'network.transport',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  /** Ours: which Switchboard server an attempt went to, and which API a request came in on. */
  upstream: 'switchboard.server',
  apiTransport: 'switchboard.transport',
} as const;

/** The conventions' bucket boundaries for the MCP duration histograms, in seconds. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

export type Attributes = Record<string, string | number>;

/**
 * The per-method attributes of a request: the tool (with `execute_tool`) or prompt it names, or
 * the resource URI. `target` is the name that goes into the span name (low cardinality: never
 * a URI).
 */
export function methodAttributes(method: string, params: { name?: unknown; uri?: unknown }): { attributes: Attributes; target?: string } {
  const attributes: Attributes = { [ATTR.method]: method };
  const name = typeof params.name === 'string' ? params.name : undefined;
  if (method === 'tools/call' && name !== undefined) {
    attributes[ATTR.toolName] = name;
    attributes[ATTR.operation] = 'execute_tool';
    return { attributes, target: name };
  }
  if (method === 'prompts/get' && name !== undefined) {
    attributes[ATTR.promptName] = name;
    return { attributes, target: name };
  }
  if (typeof params.uri === 'string') attributes[ATTR.resourceUri] = params.uri;
  return { attributes };
}

/** `{mcp.method.name} {target}`, or the method alone when there is no low-cardinality target. */
export function spanName(method: string, target: string | undefined): string {
  return target === undefined ? method : `${method} ${target}`;
}

/** `pipe` for stdio, `tcp` for HTTP and SSE (network.transport). */
export function networkTransportOf(transport: string): string {
  return transport === 'stdio' ? 'pipe' : 'tcp';
}

/**
 * `error.type` of a failure: our stable code, a JSON-RPC error's numeric code as a string (as the
 * conventions ask), else the error's class name.
 */
export function errorTypeOf(err: unknown): string {
  if (isSwitchboardError(err)) return err.code;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'number') return String(code);
    return err.name || '_OTHER';
  }
  return '_OTHER';
}

/** A tools/call result with `isError: true` is a failure too: `tool_error` (the conventions' value). */
export function resultErrorType(method: string, result: unknown): string | undefined {
  return method === 'tools/call' && (result as { isError?: unknown } | undefined)?.isError === true ? 'tool_error' : undefined;
}

/** `server.address` / `server.port` of an HTTP upstream (parsed once per URL). */
const addresses = new Map<string, Attributes>();
export function addressAttributes(url: string | undefined): Attributes | undefined {
  if (url === undefined) return undefined;
  let known = addresses.get(url);
  if (!known) {
    try {
      const parsed = new URL(url);
      const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
      known = { [ATTR.serverAddress]: parsed.hostname, [ATTR.serverPort]: port };
    } catch {
      known = {};
    }
    if (addresses.size > 1000) addresses.clear();
    addresses.set(url, known);
  }
  return known;
}
