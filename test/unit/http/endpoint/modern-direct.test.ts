import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { directRoute, MODERN_REVISION, ModernDirect } from '../../../../src/http/endpoint/modern-direct.js';
import { NodeExchange } from '../../../../src/http/endpoint/node-exchange.js';
import { rawRequest } from '../../../helpers/raw-http.js';
import { answersOnlyAnAbort, sseMessages } from '../../../helpers/sdk-server-handlers.js';

/**
 * Issue #44 item 1: 2026-07-28 requests served without the SDK handler's web Request/Response —
 * a real HTTP server, the SDK's `Server` on modern-direct.ts's per-request `NodeExchange`, raw HTTP
 * clients. Every request here is one `directRoute` accepts (asserted), so the direct path answers it.
 */

const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_REVISION };

/** An HTTP server whose every POST goes through `directRoute` to `ModernDirect`, a new SDK `Server` per request. */
async function serve(setup: (server: Server) => void): Promise<{ url: string; direct: ModernDirect }> {
  const direct = new ModernDirect(() => {
    const server = new Server(
      { name: 'modern-direct-test', version: '1.0.0' },
      { capabilities: { tools: {} }, supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS, MODERN_REVISION] },
    );
    setup(server);
    return server;
  });
  const http = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      const route = directRoute({ method: req.method ?? 'GET', headers: req.headers, body: JSON.parse(text) });
      expect(route).toBeDefined();
      void direct.serve(route!, req, res, undefined);
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  onTestFinished(async () => {
    http.closeAllConnections();
    await Promise.all([new Promise((resolve) => http.close(resolve)), direct.close()]);
  });
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, direct };
}

function call(id: number, name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: { ...envelope, ...extra } } });
}

describe('ModernDirect', () => {
  it('serves a call on the SDK server through a NodeExchange, its answer whole with its Content-Length, ctx.http.req the request', async () => {
    const seen: { transport?: unknown; url?: string; isRequest?: boolean } = {};
    const { url } = await serve((server) =>
      server.setRequestHandler('tools/call', (request, ctx) => {
        seen.transport = server.transport;
        seen.url = ctx.http?.req?.url;
        seen.isRequest = ctx.http?.req instanceof Request;
        return { content: [{ type: 'text', text: `hi ${request.params.name}` }] };
      }),
    );
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, body: call(1, 'echo') });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { content: [{ text: 'hi echo' }] } });
    expect(seen.transport).toBeInstanceOf(NodeExchange);
    expect(seen).toMatchObject({ url: url, isRequest: true });
  });

  it('answers server/discover on the modern revision the server was bound to', async () => {
    const { url } = await serve(() => undefined);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: envelope } });
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'server/discover' }, body });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ id: 2, result: { supportedVersions: expect.arrayContaining([MODERN_REVISION]) } });
  });

  it("answers a method the server has no handler for with the SDK's -32601 on HTTP 404, as its own entry does", async () => {
    const { url } = await serve(() => undefined);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'prompts/list', params: { _meta: envelope } });
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'prompts/list' }, body });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ id: 3, error: { code: -32601 } });
  });

  it('streams an answer with notifications before it as SSE, each frame as it comes', async () => {
    const { url } = await serve((server) =>
      server.setRequestHandler('tools/call', async (_request, ctx) => {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } });
        return { content: [{ type: 'text', text: 'done' }] };
      }),
    );
    const res = await rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'work' }, body: call(4, 'work', { progressToken: 'p' }) });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(sseMessages(res.body)).toMatchObject([
      { method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } },
      { id: 4, result: { content: [{ text: 'done' }] } },
    ]);
  });

  it("aborts the handler's work when the client goes away before the answer", async () => {
    const { handler, started, aborted } = answersOnlyAnAbort();
    const { url } = await serve((server) => server.setRequestHandler('tools/call', handler));
    const req = request(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'wait' }, agent: false });
    req.on('error', () => undefined);
    req.on('response', (res: IncomingMessage) => res.resume());
    req.end(call(5, 'wait'));
    await started.promise;
    req.destroy();
    await aborted.promise;
  });
});

describe('ModernDirect.close', () => {
  it("answers 499 to a call still in flight (shutdown), as the SDK's entry does, and aborts the handler's work", async () => {
    const { handler, started, aborted } = answersOnlyAnAbort();
    const { url, direct } = await serve((server) => server.setRequestHandler('tools/call', handler));
    const answer = rawRequest(url, { method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'wait' }, body: call(8, 'wait') });
    await started.promise;
    await direct.close();
    expect(await answer).toMatchObject({ status: 499, body: '' });
    await aborted.promise;
  });
});

describe('directRoute', () => {
  const post = (headers: Record<string, string>, body: unknown) => directRoute({ method: 'POST', headers: { ...HEADERS, ...headers }, body });
  const callBody = JSON.parse(call(6, 'echo')) as Record<string, unknown>;

  it('takes a modern request whose standard headers certainly pass the SDK entry', () => {
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, callBody)).toMatchObject({
      message: { id: 6, method: 'tools/call' },
      classification: { era: 'modern', revision: MODERN_REVISION },
    });
  });

  it("leaves everything else to the SDK's handler, which answers it", () => {
    expect(post({ 'mcp-method': 'tools/call' }, callBody)).toBeUndefined(); // Mcp-Name missing
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': 'other' }, callBody)).toBeUndefined(); // Mcp-Name mismatch
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': '=?base64?ZWNobw==?=' }, callBody)).toBeUndefined(); // encoded: the SDK decodes
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': ' echo' }, callBody)).toBeUndefined();
    expect(post({ 'mcp-name': 'echo' }, callBody)).toBeUndefined(); // Mcp-Method missing
    expect(post({ 'mcp-method': 'tools/list', 'mcp-name': 'echo' }, callBody)).toBeUndefined(); // header/body mismatch: the SDK's -32020
    expect(directRoute({ method: 'POST', headers: { ...HEADERS, 'mcp-method': 'tools/call', 'mcp-name': 'echo', 'mcp-protocol-version': '' }, body: callBody })).toBeUndefined();
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': 'echo', 'content-type': 'text/plain' }, callBody)).toBeUndefined(); // the SDK's 415
    expect(
      post({ 'mcp-method': 'subscriptions/listen' }, { jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params: { _meta: envelope, notifications: {} } }),
    ).toBeUndefined();
    expect(post({ 'mcp-method': 'notifications/cancelled' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: envelope, requestId: 1 } })).toBeUndefined();
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': 'echo' }, [callBody])).toBeUndefined(); // a batch
    const other = { ...callBody, params: { ...(callBody.params as object), _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } } };
    expect(post({ 'mcp-method': 'tools/call', 'mcp-name': 'echo', 'mcp-protocol-version': '2027-01-01' }, other)).toBeUndefined(); // unsupported revision
    expect(directRoute({ method: 'GET', headers: HEADERS, body: undefined })).toBeUndefined();
  });
});
