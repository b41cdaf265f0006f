import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../src/errors.js';
import { addressAttributes, errorTypeOf, methodAttributes, networkTransportOf, resultErrorType, spanName } from '../../../src/telemetry/mcp-attributes.js';
import { traceCarrierOfBody, traceHeadersFetch } from '../../../src/telemetry/trace-headers.js';

/** The MCP semantic conventions' names and values (issue #26). */
describe('mcp attributes', () => {
  it('names a tool call after its tool, a prompt after its prompt, a resource read after nothing (a URI is high-cardinality)', () => {
    const tool = methodAttributes('tools/call', { name: 'echo' });
    expect(tool).toEqual({ attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool' }, target: 'echo' });
    expect(spanName('tools/call', tool.target)).toBe('tools/call echo');
    const prompt = methodAttributes('prompts/get', { name: 'greet' });
    expect(prompt).toEqual({ attributes: { 'mcp.method.name': 'prompts/get', 'gen_ai.prompt.name': 'greet' }, target: 'greet' });
    const read = methodAttributes('resources/read', { uri: 'file:///a' });
    expect(read).toEqual({ attributes: { 'mcp.method.name': 'resources/read', 'mcp.resource.uri': 'file:///a' } });
    expect(spanName('resources/read', read.target)).toBe('resources/read');
  });

  it('tells error.type: our code, a JSON-RPC code as a string, tool_error for an isError result', () => {
    expect(errorTypeOf(new SwitchboardError('TOOL_CALL_TIMEOUT', 'late'))).toBe('TOOL_CALL_TIMEOUT');
    expect(errorTypeOf(Object.assign(new Error('bad'), { code: -32602 }))).toBe('-32602');
    expect(errorTypeOf(new TypeError('x'))).toBe('TypeError');
    expect(resultErrorType('tools/call', { isError: true })).toBe('tool_error');
    expect(resultErrorType('tools/call', { content: [] })).toBeUndefined();
    expect(resultErrorType('prompts/get', { isError: true })).toBeUndefined();
  });

  it('maps transports and addresses', () => {
    expect(networkTransportOf('stdio')).toBe('pipe');
    expect(networkTransportOf('http')).toBe('tcp');
    expect(addressAttributes('https://user:pw@mcp.example.com/mcp?key=secret')).toEqual({ 'server.address': 'mcp.example.com', 'server.port': 443 });
    expect(addressAttributes('http://127.0.0.1:8123/mcp')).toEqual({ 'server.address': '127.0.0.1', 'server.port': 8123 });
  });
});

describe('trace headers to HTTP upstreams', () => {
  const body = (meta: unknown) => JSON.stringify({ method: 'tools/call', params: { name: 't', arguments: { traceparent: 'an argument' }, _meta: meta }, jsonrpc: '2.0', id: 1 });

  it('reads the carrier from params._meta only', () => {
    expect(traceCarrierOfBody(body({ traceparent: '00-a-b-01', tracestate: 'k=v' }))).toEqual({ traceparent: '00-a-b-01', tracestate: 'k=v' });
    expect(traceCarrierOfBody(body(undefined))).toBeUndefined();
    expect(traceCarrierOfBody('{"jsonrpc":"2.0"}')).toBeUndefined();
    expect(traceCarrierOfBody(undefined)).toBeUndefined();
  });

  it('adds traceparent / tracestate headers beside the existing ones', async () => {
    const seen: Array<Headers | undefined> = [];
    const fetch = traceHeadersFetch(async (_url, init) => {
      seen.push(init?.headers === undefined ? undefined : new Headers(init.headers));
      return new Response('{}');
    });
    await fetch('http://x/mcp', { method: 'POST', headers: { authorization: 'Bearer t' }, body: body({ traceparent: '00-a-b-01', tracestate: 'k=v' }) });
    await fetch('http://x/mcp', { method: 'POST', headers: { authorization: 'Bearer t' }, body: body(undefined) });
    expect(seen[0]?.get('traceparent')).toBe('00-a-b-01');
    expect(seen[0]?.get('tracestate')).toBe('k=v');
    expect(seen[0]?.get('authorization')).toBe('Bearer t');
    expect(seen[1]?.get('traceparent')).toBeNull();
  });
});
